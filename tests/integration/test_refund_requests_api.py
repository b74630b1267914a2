"""Refund-request tokens through the API and the hosted pages: docs/spec.md §3.2 rows, renderings, refusals."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from tests.integration.helpers import USDT, expire_due, pay, quick
from tests.integration.test_refunds_api import (
    DEST,
    events,
    last_seq,
    paid_order,
    set_auto_approve,
)
from web.edge.app_state import CONTEXT


async def mint(client, **body):
    return await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refund-requests", body)


async def minted(client, order_id: str, amount: str = "5.00", **extra) -> dict:
    status, body = await mint(client, ref_type="order_id", ref_value=order_id, amount=amount, **extra)
    assert status == 201, body
    return body


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


class Buyer:
    """The buyer's browser, without credentials: reads the page, posts the form like the page's script."""

    def __init__(self, stack):
        self.stack = stack

    def path(self, url: str) -> str:
        return url.split("/refund-request/", 1)[1]

    async def page(self, token: str, query: str = "") -> tuple[int, str]:
        async with self.stack.http.get(f"{self.stack.base_url}/refund-request/{token}{query}") as resp:
            return resp.status, await resp.text()

    async def csrf(self, token: str) -> str:
        _, html = await self.page(token)
        return re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)

    async def submit(self, token: str, amount: str = "5.00", csrf: str | None = None, **extra) -> tuple[int, dict]:
        body = {"refund_to_address": DEST["refund_to_address"], "refund_network": "sepolia",
                "refund_token_address": USDT, "amount": amount, "reason": "broken", "note": "please",
                "csrf": csrf if csrf is not None else await self.csrf(token), **extra}
        async with self.stack.http.post(f"{self.stack.base_url}/refund-request/{token}", json=body) as resp:
            return resp.status, await resp.json()

    async def renew(self, token: str, note: str = "I was away") -> tuple[int, dict]:
        _, html = await self.page(token)
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)
        async with self.stack.http.post(f"{self.stack.base_url}/refund-request/{token}/renewal",
                                        json={"customer_note": note, "csrf": csrf}) as resp:
            return resp.status, await resp.json()


@pytest.fixture
def buyer(stack):
    return Buyer(stack)


async def test_mint_answer_and_defaults(stack, merchant):
    order_id = await paid_order(merchant)
    since = await last_seq(stack, order_id)
    body = await minted(merchant, order_id, metadata={"ticket": "T-9"}, hide_summary=True)
    assert re.fullmatch(r"rfqt_[0-9a-f]{60}", body["token"])  # as docs/refunds.md says
    assert body["refund_url"] == f"{stack.settings.checkout_base()}/refund-request/{body['token']}"
    lifetime = (_when(body["expires_at"]) - stack.clock()).total_seconds()
    assert 1790 <= lifetime <= 1800
    assert (body["status"], body["amount"], body["metadata"], body["hide_summary"]) == ("ACTIVE", "5.00", {"ticket": "T-9"}, True)
    assert await events(stack, order_id, since) == ["refund_request.created"]
    data = await stack.pool.fetchval("SELECT data FROM events WHERE order_id = $1 AND type = 'refund_request.created'",
                                     order_id)
    assert '"source":"b2b"' in data.replace(" ", "")


@pytest.mark.parametrize("ref_type", ["order_id", "order_number", "session_id", "session_key"])
async def test_mint_by_each_reference(merchant, ref_type):
    created = await quick(merchant, amount="10.00")
    await pay(merchant, created["order_id"], "10.00")
    status, body = await mint(merchant, ref_type=ref_type, ref_value=created[ref_type], amount="3.00")
    assert status == 201, body
    assert (body["order_id"], body["ref_type"], body["ref_value"]) == (created["order_id"], ref_type, created[ref_type])


async def test_legacy_body_ceiling_is_refundable_balance(merchant):
    order_id = await paid_order(merchant, "10.00")
    await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refunds",
                        {"order_id": order_id, "amount": "2.50", **DEST})
    status, body = await mint(merchant, order_id=order_id)
    assert status == 201 and (body["ref_type"], body["amount"]) == ("order_id", "7.50")


@pytest.mark.parametrize("ttl", [5, 86_400 * 400, 0])
async def test_ttl_seconds_overrides_without_bounds(stack, merchant, ttl):
    order_id = await paid_order(merchant)
    body = await minted(merchant, order_id, ttl_seconds=ttl)
    lifetime = (_when(body["expires_at"]) - stack.clock()).total_seconds()
    assert ttl - 10 <= lifetime <= ttl


MINT_REFUSALS = [
    ("above-refundable", {"ref_type": "order_id", "amount": "10.01"}, 409, "amount_exceeds_refundable", "amount"),
    ("missing-amount", {"ref_type": "order_id"}, 422, "missing_field", "amount"),
    ("bad-ref-type", {"ref_type": "email", "amount": "1.00"}, 422, "invalid_field", "ref_type"),
    ("metadata-not-strings", {"ref_type": "order_id", "amount": "1.00", "metadata": {"n": 1}}, 422, "invalid_field", "metadata"),
    ("seven-decimals", {"ref_type": "order_id", "amount": "1.0000001"}, 422, "invalid_amount", "amount"),
    ("unknown-order-number", {"ref_type": "order_number", "ref_value": "999999", "amount": "1.00"}, 404,
     "order_not_found", "ref_value"),
    ("unknown-session-key", {"ref_type": "session_key", "ref_value": "cs_test_nope", "amount": "1.00"}, 404,
     "session_not_found", "ref_value"),
    ("nothing", {}, 422, "missing_field", "ref_type"),
]


@pytest.mark.parametrize("body,status,code,param", [r[1:] for r in MINT_REFUSALS], ids=[r[0] for r in MINT_REFUSALS])
async def test_mint_refused(stack, merchant, body, status, code, param):
    order_id = await paid_order(merchant)
    body = {"ref_value": order_id, **body} if "ref_type" in body else body
    got, answer = await mint(merchant, **body)
    assert (got, answer["error"]["code"], answer["error"].get("param")) == (status, code, param), answer
    assert await stack.pool.fetchval("SELECT count(*) FROM refund_tokens WHERE order_id = $1", order_id) == 0


async def test_mint_on_unpaid_order_refused(merchant):
    order_id = (await quick(merchant))["order_id"]
    status, body = await mint(merchant, ref_type="order_id", ref_value=order_id, amount="1.00")
    assert (status, body["error"]["code"]) == (409, "order_not_paid")


async def test_buyer_submission_creates_pending_refund(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    since = await last_seq(stack, order_id)
    status, answer = await buyer.submit(token, "4.00")
    assert status == 201, answer
    assert answer["status"] == "PENDING" and answer["refundId"].startswith("re_") and answer["linkToken"]
    assert await events(stack, order_id, since) == ["payment.refund.requested", "refund_request.submitted"]
    status, refund = await merchant.get(f"/b2b/v1/refunds/{answer['refundId']}")
    assert (refund["status"], refund["amount"], refund["metadata"], refund["source"]) == (
        "PENDING", "4.00", {"note": "please"}, "customer")
    status, read = await merchant.get(f"/b2b/v1/refund-requests/{token}")
    assert (read["status"], read["refund_id"]) == ("SUBMITTED", answer["refundId"])


async def test_auto_approved_submission(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    await set_auto_approve(stack, merchant, True)
    try:
        status, answer = await buyer.submit(token, "2.00")
    finally:
        await set_auto_approve(stack, merchant, False)
    assert (status, answer["status"]) == (201, "APPROVED")


async def test_second_submit_refused_and_concurrent_submits_make_one_refund(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    csrf = await buyer.csrf(token)
    answers = await asyncio.gather(*[buyer.submit(token, "1.00", csrf=csrf) for _ in range(5)])
    assert sorted(status for status, _ in answers) == [201, 409, 409, 409, 409]
    assert {a["error"]["code"] for s, a in answers if s == 409} == {"refund_request_not_active"}
    assert await stack.pool.fetchval("SELECT count(*) FROM refunds WHERE order_id = $1", order_id) == 1


BUYER_REFUSALS = [
    ("above-ceiling", {"amount": "5.01"}, 422, "amount_exceeds_ceiling", "amount"),
    ("bad-address", {"refund_to_address": "0x123"}, 422, "invalid_address", "refund_to_address"),
    ("unknown-network", {"refund_network": "nope"}, 422, "unknown_network", "refund_network"),
    ("forged-csrf", {"csrf": "00" * 32}, 403, "csrf_token_invalid", "csrf"),
    ("unknown-field", {"currency": "USD"}, 422, "unknown_field", "currency"),
]


@pytest.mark.parametrize("change,status,code,param", [r[1:] for r in BUYER_REFUSALS], ids=[r[0] for r in BUYER_REFUSALS])
async def test_buyer_refusals(stack, merchant, buyer, change, status, code, param):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    amount = change.pop("amount", "5.00")
    got, answer = await buyer.submit(token, amount, csrf=change.pop("csrf", None), **change)
    assert (got, answer["error"]["code"], answer["error"].get("param")) == (status, code, param)
    assert await stack.pool.fetchval("SELECT count(*) FROM refunds WHERE order_id = $1", order_id) == 0


async def test_a_submission_without_the_page_field_is_accepted(stack, merchant, buyer):
    """The token is the credential: a buyer's app posting the form fields alone gets its refund."""
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    body = {"refund_to_address": DEST["refund_to_address"], "refund_network": "sepolia",
            "refund_token_address": USDT, "amount": "2.00", "reason": "broken"}
    async with stack.http.post(f"{stack.base_url}/refund-request/{token}", json=body) as resp:
        answer = await resp.json()
        assert resp.status == 201 and answer["status"] == "PENDING"
    status, refund = await merchant.get(f"/b2b/v1/refunds/{answer['refundId']}")
    assert (status, refund["amount"], refund["linkToken"]) == (200, "2.00", answer["linkToken"])


async def test_cross_origin_post_refused(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    async with stack.http.post(f"{stack.base_url}/refund-request/{token}", headers={"Origin": "https://evil.example"},
                               json={"csrf": await buyer.csrf(token), "amount": "1.00", "refund_network": "sepolia",
                                     "refund_to_address": DEST["refund_to_address"], "refund_token_address": USDT}) as r:
        assert r.status == 403 and (await r.json())["error"]["code"] == "cross_origin_refused"


async def test_cancel_emits_once_with_reason(stack, merchant):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    since = await last_seq(stack, order_id)
    first = await merchant.post(f"/b2b/v1/refund-requests/{token}/cancel", {"reason": "sent by mistake"})
    second = await merchant.post(f"/b2b/v1/refund-requests/{token}/cancel", {"reason": "again"})
    assert first[0] == second[0] == 200 and first[1]["status"] == "CANCELED"
    assert await events(stack, order_id, since) == ["refund_request.canceled"]
    data = await stack.pool.fetchval(
        "SELECT data->>'reason' FROM events WHERE order_id = $1 AND type = 'refund_request.canceled'", order_id)
    assert data == "sent by mistake"


async def test_expiry_by_scheduler_and_at_read_time(stack, merchant):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id, ttl_seconds=1))["token"]
    stack.clock.advance(1.1)
    status, read = await merchant.get(f"/b2b/v1/refund-requests/{token}")
    assert (status, read["status"]) == (200, "EXPIRED_UNUSED")  # before any sweep ran
    assert await expire_due(stack, 0) >= 1
    for _ in range(50):
        if await stack.pool.fetchval("SELECT status FROM refund_tokens WHERE token = $1", token) == "EXPIRED_UNUSED":
            break
        await asyncio.sleep(0.05)
    assert await stack.pool.fetchval("SELECT status FROM refund_tokens WHERE token = $1", token) == "EXPIRED_UNUSED"


async def test_renewal_flow(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id, ttl_seconds=1))["token"]
    stack.clock.advance(1.1)
    since = await last_seq(stack, order_id)
    status, answer = await buyer.renew(token, "I was travelling")
    assert (status, answer["status"]) == (200, "RENEWAL_REQUESTED")
    status, read = await merchant.get(f"/b2b/v1/refund-requests/{token}")
    assert (read["status"], read["customer_note"]) == ("RENEWAL_REQUESTED", "I was travelling")
    status, renewed = await merchant.post(f"/b2b/v1/refund-requests/{token}/renewal/approve")
    assert status == 201 and renewed["status"] == "ACTIVE" and renewed["token"] != token
    assert renewed["old_token"] == token and renewed["amount"] == "5.00"
    assert await events(stack, order_id, since) == [
        "refund_request.expired", "refund_request.renewal_requested", "refund_request.renewed", "refund_request.created"]
    rows = await stack.pool.fetch("SELECT type, data FROM events WHERE order_id = $1 AND seq > $2 ORDER BY seq",
                                  order_id, since)
    assert f'"new_token":"{renewed["token"]}"' in rows[2]["data"].replace(" ", "")
    assert '"source":"renewal"' in rows[3]["data"].replace(" ", "")
    assert (await buyer.submit(renewed["token"], "1.00"))[0] == 201


async def test_renewal_approval_without_request_refused(merchant):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    status, body = await merchant.post(f"/b2b/v1/refund-requests/{token}/renewal/approve")
    assert (status, body["error"]["code"]) == (409, "renewal_not_requested")


async def test_token_of_another_merchant_is_not_found(stack, merchant):
    other = await stack.merchant("Other")
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    for method, path in (("GET", f"/b2b/v1/refund-requests/{token}"), ("POST", f"/b2b/v1/refund-requests/{token}/cancel")):
        status, body = await other.call(method, path)
        assert (status, body["error"]["code"]) == (404, "refund_request_not_found")


async def _active(stack, merchant, buyer, token):
    return None


async def _submitted(stack, merchant, buyer, token):
    return (await buyer.submit(token, "2.00"))[1]


async def _expired(stack, merchant, buyer, token):
    stack.clock.advance(1.1)


async def _renewal_requested(stack, merchant, buyer, token):
    stack.clock.advance(1.1)
    assert (await buyer.renew(token))[0] == 200


async def _renewed(stack, merchant, buyer, token):
    await _renewal_requested(stack, merchant, buyer, token)
    status, body = await merchant.post(f"/b2b/v1/refund-requests/{token}/renewal/approve")
    assert status == 201
    return body


async def _canceled(stack, merchant, buyer, token):
    assert (await merchant.post(f"/b2b/v1/refund-requests/{token}/cancel"))[0] == 200


# docs/spec.md §3.2's rendering table: (state, setup, what the page shows, what it must not)
RENDERINGS = [
    ("ACTIVE", _active, 'data-testid="refund-form"', 'data-testid="refund-status-card"'),
    ("SUBMITTED", _submitted, 'data-testid="refund-status-card"', 'data-testid="refund-form"'),
    ("EXPIRED_UNUSED", _expired, 'data-testid="refund-expired"', 'data-testid="refund-form"'),
    ("RENEWAL_REQUESTED", _renewal_requested, 'data-testid="refund-renewal-requested"', 'data-testid="refund-form"'),
    ("RENEWED", _renewed, 'data-testid="refund-renewed"', 'data-testid="refund-form"'),
    ("CANCELED", _canceled, 'data-testid="refund-canceled"', 'data-testid="refund-form"'),
]


@pytest.mark.parametrize("state,setup,shown,absent", RENDERINGS, ids=[r[0] for r in RENDERINGS])
async def test_page_renders_each_state(stack, merchant, buyer, state, setup, shown, absent):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id, ttl_seconds=1 if state in ("EXPIRED_UNUSED", "RENEWAL_REQUESTED", "RENEWED") else 600))["token"]
    extra = await setup(stack, merchant, buyer, token)
    status, html = await buyer.page(token)
    assert status == 200
    assert f'data-status="{state}"' in html
    assert shown in html and absent not in html
    if state == "RENEWED":
        assert extra["token"] not in html  # a forwarded old link never reveals the new one
    if state == "SUBMITTED":
        assert "2.00 USD" in html and 'data-testid="refund-already-submitted"' in html


async def test_form_offers_the_networks_of_the_orders_mode(stack, merchant, buyer):
    token = (await minted(merchant, await paid_order(merchant)))["token"]
    _, html = await buyer.page(token)
    assert 'value="sepolia"' in html and ">Ethereum Sepolia<" in html
    assert 'value="ethereum"' not in html  # a test-mode order offers no mainnet


async def test_form_honours_flags_locale_and_wallet_prefill(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id, hide_summary=True))["token"]
    status, html = await buyer.page(token, "?locale=ja&wallet_address=0x52908400098527886E0F7030069857D2E4169EE7&hide_header=1")
    assert status == 200 and 'lang="ja"' in html and "返金を申請する" in html
    assert 'data-testid="refund-summary"' not in html and "<header" not in html
    assert 'value="0x52908400098527886E0F7030069857D2E4169EE7"' in html


async def test_status_page_and_json_twin(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    _, answer = await buyer.submit(token, "2.50")
    async with stack.http.get(f"{stack.base_url}/r/{answer['linkToken']}.json") as resp:
        twin = await resp.json()
    assert (twin["status"], twin["amount"], twin["refund_id"], twin["linkToken"]) == (
        "PENDING", "2.50", answer["refundId"], answer["linkToken"])
    assert "external_ref" not in twin and "reason" not in twin
    async with stack.http.get(f"{stack.base_url}/r/{answer['linkToken']}") as resp:
        html = await resp.text()
    assert resp.status == 200 and 'data-status="PENDING"' in html and "2.50 USD" in html
    async with stack.http.get(f"{stack.base_url}/r/rl_unknown") as resp:
        assert resp.status == 404


async def test_plain_form_post_without_script_redirects_to_status(stack, merchant, buyer):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    form = {"csrf": await buyer.csrf(token), "amount": "1.00", "refund_network": "sepolia",
            "refund_token_address": USDT, "refund_to_address": DEST["refund_to_address"], "reason": ""}
    async with stack.http.post(f"{stack.base_url}/refund-request/{token}", data=form, allow_redirects=False) as resp:
        assert resp.status == 303 and resp.headers["Location"].startswith("/r/rl_")


async def _mint_row(stack, merchant, buyer, order_id, token):
    return (await mint(merchant, ref_type="order_id", ref_value=order_id, amount="1.00"))[0]


async def _submit_row(stack, merchant, buyer, order_id, token):
    return (await buyer.submit(token, "1.00"))[0]


async def _time_passes_row(stack, merchant, buyer, order_id, token):
    stack.clock.advance(1.1)
    sent = await expire_due(stack, 0)
    for _ in range(60):
        if await stack.pool.fetchval("SELECT status FROM refund_tokens WHERE token = $1", token) == "EXPIRED_UNUSED":
            return 200 if sent else 0
        await asyncio.sleep(0.05)
    return 0


async def _cancel_row(stack, merchant, buyer, order_id, token):
    return (await merchant.post(f"/b2b/v1/refund-requests/{token}/cancel", {"reason": "typo"}))[0]


async def _renewal_request_row(stack, merchant, buyer, order_id, token):
    await _time_passes_row(stack, merchant, buyer, order_id, token)
    return (await buyer.renew(token))[0]


async def _renew_row(stack, merchant, buyer, order_id, token):
    await _renewal_request_row(stack, merchant, buyer, order_id, token)
    return (await merchant.post(f"/b2b/v1/refund-requests/{token}/renewal/approve"))[0]


# docs/spec.md §3.2 through HTTP and the hosted form: (row, trigger, status, token state, events of the trigger's tail)
TOKEN_ROWS = [
    ("none-mint-active", _mint_row, 201, None, ["refund_request.created"]),
    ("active-buyer-submits-submitted", _submit_row, 201, "SUBMITTED",
     ["payment.refund.requested", "refund_request.submitted"]),
    ("active-time-passes-expired", _time_passes_row, 200, "EXPIRED_UNUSED", ["refund_request.expired"]),
    ("active-merchant-cancels-canceled", _cancel_row, 200, "CANCELED", ["refund_request.canceled"]),
    ("expired-buyer-requests-renewal", _renewal_request_row, 200, "RENEWAL_REQUESTED",
     ["refund_request.renewal_requested"]),
    ("renewal-requested-merchant-approves-renewed", _renew_row, 201, "RENEWED",
     ["refund_request.renewed", "refund_request.created"]),
]


@pytest.mark.parametrize("trigger,status,state,tail", [r[1:] for r in TOKEN_ROWS], ids=[r[0] for r in TOKEN_ROWS])
async def test_token_row_through_http(stack, merchant, buyer, trigger, status, state, tail):
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id, ttl_seconds=1 if "expire" in trigger.__name__ or "renew" in
                          trigger.__name__ or "time" in trigger.__name__ else 600))["token"]
    assert await trigger(stack, merchant, buyer, order_id, token) == status
    recorded = await events(stack, order_id)
    assert recorded[-len(tail):] == tail
    if state is not None:
        assert await stack.pool.fetchval("SELECT status FROM refund_tokens WHERE token = $1", token) == state


async def test_the_hosted_form_answers_an_unreachable_or_slow_queue_like_the_api(stack, merchant, buyer, monkeypatch):
    """The form's command takes the API's round trip: Redis away is a JSON 503 that names the command and
    created nothing; no answer in time is a 504, and the command still applies."""
    order_id = await paid_order(merchant)
    token = (await minted(merchant, order_id))["token"]
    csrf = await buyer.csrf(token)
    bus = stack.server.app[CONTEXT].bus

    async def unreachable(*args, **kwargs):
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(bus, "send", unreachable)
    status, answer = await buyer.submit(token, "2.00", csrf=csrf)
    assert (status, answer["error"]["code"]) == (503, "service_unavailable"), answer
    assert answer["error"]["command_id"].startswith("cmd_")
    async with stack.http.post(f"{stack.base_url}/refund-request/{token}/renewal", json={"csrf": csrf}) as resp:
        assert (resp.status, (await resp.json())["error"]["code"]) == (503, "service_unavailable")
    monkeypatch.undo()
    assert await stack.pool.fetchval("SELECT count(*) FROM refunds WHERE order_id = $1", order_id) == 0

    monkeypatch.setattr(bus, "timeout_s", 0.001)  # the web gives up long before any actor can answer
    status, answer = await buyer.submit(token, "2.00", csrf=csrf)
    assert (status, answer["error"]["code"]) == (504, "command_timeout"), answer
    assert "reload the page" in answer["error"]["message"]
    monkeypatch.undo()
    for _ in range(200):
        if await stack.pool.fetchval("SELECT count(*) FROM refunds WHERE order_id = $1", order_id):
            break
        await asyncio.sleep(0.05)
    status, body = await merchant.get(f"/b2b/v1/refund-requests/{token}")
    assert (status, body["status"]) == (200, "SUBMITTED")


async def test_form_names_the_merchant_and_says_test_mode_as_the_checkout_page_does(stack, buyer):
    merchant = await stack.merchant('<script>alert(1)</script> & "Co"')
    token = (await minted(merchant, await paid_order(merchant)))["token"]
    _, html = await buyer.page(token)
    header = html[html.index('data-testid="header"'):html.index("</header>")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;Co&#34;" in header and "<script>alert" not in html
    assert 'data-testid="test-mode"' in header and "Test mode" in header
