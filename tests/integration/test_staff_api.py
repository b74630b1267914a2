"""The merchant's team through the B2B API: list, invite (a one-time link), revoke, change a role, remove; the last
owner stays; every change is in the audit log, which no statement can change or delete."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest

from accounts import users
from tests.dashboard.support import PASSWORD, Http, make_staff


@pytest.fixture
async def merchant(stack):
    """The team is managed with the live key (a test key reaches none of it: test_test_keys.py)."""
    return await stack.merchant(livemode=True)


def _staff(client) -> str:
    return f"/b2b/v1/merchants/{client.merchant_id}/staff"


async def _audit(client, query: str = "") -> list[dict]:
    status, body = await client.get(f"/b2b/v1/merchants/{client.merchant_id}/audit-events{query}")
    assert status == 200, body
    return body["data"]


async def test_the_staff_list_shows_each_user_with_role_sign_in_and_pin(stack, merchant):
    owner = await make_staff(stack, merchant)
    cashier = await make_staff(stack, merchant, role="cashier")
    await users.set_pin(stack.pool, (await users.find(stack.pool, cashier.email)).user_id, "1234")
    http = Http(owner.dashboard)
    await http.sign_in(owner)
    await http.close()
    status, body = await merchant.get(_staff(merchant))
    assert status == 200
    shown = {m["email"]: m for m in body["data"]}
    assert shown[owner.email]["role"] == "owner" and shown[owner.email]["last_signed_in_at"] is not None
    assert shown[owner.email]["pin_set"] is False
    assert shown[cashier.email]["role"] == "cashier" and shown[cashier.email]["last_signed_in_at"] is None
    assert shown[cashier.email]["pin_set"] is True


async def test_an_invitation_is_a_one_time_link_valid_72_hours_and_recorded(stack, merchant):
    await make_staff(stack, merchant)
    status, body = await merchant.post(_staff(merchant) + "/invitations", {"email": "New.Hire@Example.com",
                                                                            "role": "manager"})
    assert status == 201, body
    assert set(body) == {"invitation_id", "url", "expires_at"}
    # The dashboard's public address (PUBLIC_BASE_URL's, whose port is 0 in the tests) and the one-time token.
    assert urlsplit(body["url"]).path.startswith("/dashboard/invite/inv_")
    created = await stack.pool.fetchval("SELECT created_at FROM staff_invitations WHERE invitation_id = $1",
                                        body["invitation_id"])
    stored = await stack.pool.fetchval("SELECT expires_at FROM staff_invitations WHERE invitation_id = $1",
                                       body["invitation_id"])
    assert (stored - created).total_seconds() == 72 * 3600
    token = body["url"].rsplit("/", 1)[1]
    assert await stack.pool.fetchval("SELECT count(*) FROM staff_invitations WHERE token_hash = $1", token) == 0
    [event] = await _audit(merchant, "?action=staff.invited")
    # `id`, the names before `actor_id` and `audit_event_id`, are answered beside them for one version.
    assert event["actor"] == {"type": "api_key", "actor_id": merchant.public_key, "id": merchant.public_key,
                              "email": None}
    assert event["audit_event_id"].startswith("aud") and event["id"] == event["audit_event_id"]
    assert event["object_id"] == body["invitation_id"]
    assert event["details"] == {"email": "new.hire@example.com", "role": "manager"}


@pytest.mark.parametrize(("payload", "param", "code"), [
    ({"email": "a@example.com", "role": "admin"}, "role", "invalid_role"),
    ({"email": "a@example.com", "role": "<script>alert(1)</script>"}, "role", "invalid_role"),
    ({"email": "not an address", "role": "cashier"}, "email", "invalid_email"),
    ({"email": "a@example.com"}, "role", "missing_field"),
    ({"email": "a@example.com", "role": "cashier", "admin": True}, "admin", "unknown_field"),
])
async def test_a_bad_invitation_is_refused_naming_the_field_and_creates_nothing(stack, merchant, payload, param, code):
    status, body = await merchant.post(_staff(merchant) + "/invitations", payload)
    assert status == 422, body
    assert (body["error"]["param"], body["error"]["code"]) == (param, code)
    assert await stack.pool.fetchval("SELECT count(*) FROM staff_invitations WHERE merchant_id = $1",
                                     merchant.merchant_id) == 0


async def test_a_team_member_cannot_be_invited_twice(stack, merchant):
    owner = await make_staff(stack, merchant)
    status, body = await merchant.post(_staff(merchant) + "/invitations", {"email": owner.email, "role": "cashier"})
    assert (status, body["error"]["code"], body["error"]["param"]) == (409, "already_on_team", "email")


async def test_a_revoked_invitation_cannot_be_revoked_again_and_an_unknown_one_is_404(stack, merchant):
    status, body = await merchant.post(_staff(merchant) + "/invitations", {"email": "x@example.com",
                                                                            "role": "cashier"})
    invitation = f"{_staff(merchant)}/invitations/{body['invitation_id']}"
    status, body = await merchant.call("DELETE", invitation)
    assert (status, body) == (200, {"object": "staff_invitation", "invitation_id": invitation.rsplit("/", 1)[1],
                                    "revoked": True})
    status, body = await merchant.call("DELETE", invitation)
    assert (status, body["error"]["code"]) == (409, "invitation_not_pending")
    assert "revoked" in body["error"]["message"]
    status, body = await merchant.call("DELETE", f"{_staff(merchant)}/invitations/inv_nothing")
    assert (status, body["error"]["code"]) == (404, "invitation_not_found")


async def test_a_role_change_applies_to_the_open_session_at_once(stack, merchant):
    await make_staff(stack, merchant)
    manager = await make_staff(stack, merchant, role="manager")
    http = Http(manager.dashboard)
    try:
        await http.sign_in(manager)
        assert (await http.get("/test/orders"))[0] == 200
        user_id = (await users.find(stack.pool, manager.email)).user_id
        status, body = await merchant.patch(f"{_staff(merchant)}/{user_id}", {"role": "cashier"})
        assert (status, body["role"]) == (200, "cashier")
        assert (await http.get("/test/orders"))[0] == 403
    finally:
        await http.close()
    [event] = await _audit(merchant, "?action=staff.role_changed")
    assert event["details"] == {"email": manager.email, "from": "manager", "to": "cashier"}
    assert event["livemode"] is True  # made with the live key, and the row says so


async def test_a_removed_user_is_signed_out_at_once_and_cannot_sign_in(stack, merchant):
    await make_staff(stack, merchant)
    cashier = await make_staff(stack, merchant, role="cashier")
    http = Http(cashier.dashboard)
    try:
        await http.sign_in(cashier)
        assert (await http.get("/app/me"))[0] == 200
        user_id = (await users.find(stack.pool, cashier.email)).user_id
        status, body = await merchant.call("DELETE", f"{_staff(merchant)}/{user_id}")
        assert (status, body) == (200, {"object": "staff_member", "user_id": user_id, "removed": True})
        assert (await http.get("/app/me"))[0] == 401
        assert await stack.pool.fetchval("SELECT count(*) FROM dashboard_sessions WHERE user_id = $1", user_id) == 0
        assert (await http.sign_in(cashier))[0] == 401
    finally:
        await http.close()
    status, body = await merchant.get(_staff(merchant))
    assert cashier.email not in {m["email"] for m in body["data"]}
    status, body = await merchant.call("DELETE", f"{_staff(merchant)}/{user_id}")
    assert (status, body["error"]["code"], body["error"]["param"]) == (404, "staff_member_not_found", "user_id")


async def test_the_last_owner_can_be_neither_demoted_nor_removed(stack, merchant):
    owner = await make_staff(stack, merchant)
    user_id = (await users.find(stack.pool, owner.email)).user_id
    for method, payload in (("PATCH", {"role": "manager"}), ("DELETE", None)):
        status, body = await merchant.call(method, f"{_staff(merchant)}/{user_id}", payload)
        assert (status, body["error"]["code"]) == (409, "last_owner"), body
        assert "last owner" in body["error"]["message"]
    assert (await users.find(stack.pool, owner.email)).role == "owner"
    second = await make_staff(stack, merchant, role="manager")
    second_id = (await users.find(stack.pool, second.email)).user_id
    assert (await merchant.patch(f"{_staff(merchant)}/{second_id}", {"role": "owner"}))[0] == 200
    assert (await merchant.patch(f"{_staff(merchant)}/{user_id}", {"role": "manager"}))[0] == 200
    status, body = await merchant.call("DELETE", f"{_staff(merchant)}/{second_id}")
    assert (status, body["error"]["code"]) == (409, "last_owner")


async def test_another_merchants_key_reaches_no_team(stack, merchant):
    other = await stack.merchant("Other", livemode=True)
    for method, path in (("GET", _staff(merchant)), ("GET", f"/b2b/v1/merchants/{merchant.merchant_id}/audit-events"),
                         ("DELETE", f"{_staff(merchant)}/usr_x")):
        status, body = await other.call(method, path)
        assert (status, body["error"]["code"]) == (403, "merchant_mismatch")


async def test_another_merchants_user_is_not_found(stack, merchant):
    other = await stack.merchant("Other", livemode=True)
    stranger = await make_staff(stack, other)
    user_id = (await users.find(stack.pool, stranger.email)).user_id
    status, body = await merchant.patch(f"{_staff(merchant)}/{user_id}", {"role": "cashier"})
    assert (status, body["error"]["code"]) == (404, "staff_member_not_found")


async def test_the_audit_log_filters_and_pages(stack, merchant):
    owner = await make_staff(stack, merchant)
    for n in range(3):
        await merchant.post(_staff(merchant) + "/invitations", {"email": f"p{n}@example.com", "role": "cashier"})
    stack.clock.advance(2)  # times are answered to the second: the sign-in falls in a second of its own
    http = Http(owner.dashboard)
    await http.sign_in(owner)
    await http.close()
    everything = await _audit(merchant)
    assert [e["action"] for e in everything] == ["staff.signed_in"] + ["staff.invited"] * 3
    assert everything[0]["actor"]["email"] == owner.email and everything[0]["client_ip"] == "127.0.0.1"
    status, first = await merchant.get(f"/b2b/v1/merchants/{merchant.merchant_id}/audit-events?limit=2")
    assert first["has_more"] is True and len(first["data"]) == 2
    status, rest = await merchant.get(f"/b2b/v1/merchants/{merchant.merchant_id}/audit-events?limit=2"
                                      f"&cursor={first['next_cursor']}")
    assert [e["id"] for e in first["data"] + rest["data"]] == [e["id"] for e in everything]
    assert rest["has_more"] is False
    by_owner = await _audit(merchant, f"?actor={everything[0]['actor']['id']}")
    assert [e["action"] for e in by_owner] == ["staff.signed_in"]
    signed_at = everything[0]["created_at"].replace("+", "%2B")
    assert [e["action"] for e in await _audit(merchant, f"?created_gte={signed_at}")] == ["staff.signed_in"]
    assert len(await _audit(merchant, f"?created_lt={signed_at}")) == 3
    for query, param in (("?action=staff.promoted", "action"), ("?created_gte=yesterday", "created_gte"),
                         ("?who=me", "who")):
        status, body = await merchant.get(f"/b2b/v1/merchants/{merchant.merchant_id}/audit-events{query}")
        assert (status, body["error"]["param"]) == (422, param)


async def test_a_staff_user_made_by_the_command_line_still_signs_in(stack, merchant):
    user = await users.create(stack.pool, merchant.merchant_id, "cli@example.com", PASSWORD, "manager")
    assert (await users.find(stack.pool, "cli@example.com")).user_id == user.user_id


async def test_two_owners_demoting_each_other_at_once_leave_one_owner(stack, merchant):
    first, second = await make_staff(stack, merchant), await make_staff(stack, merchant, role="manager")
    ids = [(await users.find(stack.pool, s.email)).user_id for s in (first, second)]
    assert (await merchant.patch(f"{_staff(merchant)}/{ids[1]}", {"role": "owner"}))[0] == 200
    answers = await asyncio.gather(*(merchant.patch(f"{_staff(merchant)}/{user_id}", {"role": "cashier"})
                                     for user_id in ids))
    assert sorted(status for status, _ in answers) == [200, 409]
    assert [m.role for m in await users.team(stack.pool, merchant.merchant_id)].count("owner") == 1
