"""Who sees what: another merchant's user meets 404 everywhere, by link or by guessed URL, in either mode; every
form needs the session's CSRF token; a signed-out session is gone on the server."""

from __future__ import annotations

import pytest

from tests.dashboard.support import Http, make_staff
from tests.integration.test_refunds_api import customer_refund, merchant_refund, paid_order


async def first_merchants_things(staff) -> dict[str, str]:
    order_id = await paid_order(staff.client, "10.00")
    refund_id = (await merchant_refund(staff.client, order_id, "2.00"))[1]["refund_id"]
    pending = (await customer_refund(staff.client, order_id, "3.00"))[1]["refund_id"]
    status, minted = await staff.client.post(f"/b2b/v1/merchants/{staff.merchant_id}/refund-requests",
                                             {"ref_type": "order_id", "ref_value": order_id, "amount": "1.00"})
    assert status == 201
    return {"order": order_id, "refund": refund_id, "pending": pending, "token": minted["token"]}


def pages(ids: dict[str, str], mode: str) -> list[str]:
    return [f"/{mode}/orders/{ids['order']}", f"/{mode}/orders/{ids['order']}/refund",
            f"/{mode}/refunds/{ids['refund']}", f"/{mode}/refunds/{ids['pending']}",
            f"/{mode}/refunds/{ids['refund']}/progress", f"/{mode}/refund-requests/{ids['token']}"]


def actions(ids: dict[str, str]) -> list[tuple[str, dict]]:
    return [
        (f"/test/refunds/{ids['pending']}/approve", {}),
        (f"/test/refunds/{ids['pending']}/reject", {"reason": "no"}),
        (f"/test/refund-requests/{ids['token']}/cancel", {"reason": "no"}),
        (f"/test/refund-requests/{ids['token']}/renewal/approve", {}),
        (f"/test/orders/{ids['order']}/refund", {"action": "link", "amount": "1.00"}),
        (f"/test/refunds/{ids['refund']}/submit-tx", {"tx_hash": "0x" + "ab" * 32, "network": "sepolia",
                                                      "token_address": "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"}),
    ]


async def unchanged(staff, ids) -> None:
    assert (await staff.client.get(f"/b2b/v1/refunds/{ids['pending']}"))[1]["status"] == "PENDING"
    assert (await staff.client.get(f"/b2b/v1/refunds/{ids['refund']}"))[1]["transactions"] == []
    assert (await staff.client.get(f"/b2b/v1/refund-requests/{ids['token']}"))[1]["status"] == "ACTIVE"
    status, tokens = await staff.client.get(f"/b2b/v1/orders/{ids['order']}/refunds")
    assert len(tokens["data"]) == 2


async def test_a_second_merchants_user_sees_none_of_the_first_merchants_data(stack, staff, http):
    ids = await first_merchants_things(staff)
    owner = Http(staff.dashboard)
    try:
        await owner.sign_in(staff)
        assert [(await owner.get(path))[0] for path in pages(ids, "test")] == [200] * 6  # the owner sees them
        assert [(await owner.get(path))[0] for path in pages(ids, "live")] == [404] * 6  # never in the other mode
    finally:
        await owner.close()

    stranger = await make_staff(stack, name="Other Shop")
    await http.sign_in(stranger)
    for mode in ("test", "live"):
        for path in pages(ids, mode):
            status, text = await http.get(path)
            assert status == 404, path
            assert all(value not in text for value in ids.values()), path
    for path in ("/test/orders", "/test/review"):
        status, text = await http.get(path)
        assert status == 200 and all(value not in text for value in ids.values()), path
    for query in (ids["order"], "1001"):  # the first merchant's order id and number, searched for
        status, text = await http.get(f"/test/orders?q={query}")
        assert status == 200 and 'data-testid="no-orders"' in text and "data-order-id" not in text
    csrf = await http.csrf("/test/orders")
    for path, data in actions(ids):
        status, text, _ = await http.post(path, {"csrf": csrf, **data})
        assert status == 404, (path, status, text[:300])
    await unchanged(staff, ids)


async def test_every_form_needs_the_sessions_csrf_token(stack, staff, http):
    ids = await first_merchants_things(staff)
    await http.sign_in(staff)
    other_session = Http(staff.dashboard)
    try:
        await other_session.sign_in(staff)
        foreign = await other_session.csrf("/test/orders")  # the same user's, but another session's
    finally:
        await other_session.close()
    posts = actions(ids) + [("/test/settings/refunds", {"auto_approve": "on"}), ("/test/settings/api-key", {}),
                            ("/test/settings/addresses", {"address.sepolia": ""}), ("/signout", {})]
    for path, data in posts:
        for token in (None, "", "forged", foreign):
            form = data if token is None else {"csrf": token, **data}
            status, text, _ = await http.post(path, form)
            assert status == 403 and "stale or was not sent by the dashboard" in text, (path, token, status)
    await unchanged(staff, ids)
    assert (await http.get("/test/orders"))[0] == 200  # still signed in: /signout was refused too

    csrf = await http.csrf("/test/orders")
    status, text, _ = await http.post(f"/test/refunds/{ids['pending']}/approve", {"csrf": csrf},
                                      headers={"Origin": "https://evil.example"})
    assert status == 403 and "only accepts submissions from the dashboard" in text
    status, _, location = await http.post(f"/test/refunds/{ids['pending']}/approve", {},
                                          headers={"X-CSRF-Token": csrf})  # what a page's script would send
    assert (status, location) == (303, f"/dashboard/test/refunds/{ids['pending']}")


@pytest.mark.parametrize("path", ["/test/orders", "/test/review", "/test/settings"])
async def test_a_signed_out_session_is_gone_on_the_server(stack, staff, http, path):
    await http.sign_in(staff)
    [cookie] = [c for c in http.session.cookie_jar if c.key == "dash_session"]
    await http.post("/signout", {"csrf": await http.csrf(path)})
    replay = Http(staff.dashboard)
    try:
        replay.session.cookie_jar.update_cookies({"dash_session": cookie.value})
        status, _ = await replay.get(path)
        assert status == 303  # to the sign-in page: the stolen cookie opens nothing
    finally:
        await replay.close()
