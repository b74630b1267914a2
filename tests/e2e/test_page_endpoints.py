"""The checkout origin over plain HTTP: status JSON, payment attempts, SDK files and the pages' security headers."""

from __future__ import annotations

import json

import pytest

from tests.e2e.support import receive_addresses
from tests.integration.helpers import pay

EVM_HASH = "0x" + "ef" * 32


@pytest.fixture
async def checkout(stack):
    """A test merchant with receive addresses and an open 10.00 USD session; returns (client, created)."""
    client = await stack.merchant("Endpoint shop")
    await client.patch(f"/b2b/v1/merchants/{client.merchant_id}/settings",
                       {"receive_addresses": receive_addresses(client.merchant_id)})
    status, created = await client.post("/b2b/v1/checkout-sessions/quick",
                                        {"amount": "10.00", "external_ref": "SECRET-REF-1", "metadata": {"k": "v"}})
    assert status == 201
    return client, created


async def get(stack, path: str, **kw):
    async with stack.http.get(stack.base_url + path, **kw) as resp:
        return resp.status, resp.headers, await resp.read()


async def post_attempt(stack, session_key: str, body) -> tuple[int, dict]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with stack.http.post(f"{stack.base_url}/c/{session_key}/payment-attempts", data=raw,
                               headers={"Content-Type": "application/json"}) as resp:
        return resp.status, await resp.json()


async def test_status_shows_the_buyer_what_they_may_see_and_nothing_merchant_private(stack, checkout):
    _, created = checkout
    status, headers, raw = await get(stack, f"/c/{created['session_key']}/status")
    assert status == 200 and headers["Cache-Control"] == "no-store"
    body = json.loads(raw)
    assert set(body) == {"state", "amount_due", "amount_paid", "currency", "expires_at", "now", "confirmations",
                         "receipt_url"}
    assert body["state"] == "waiting" and body["amount_due"] == "10.00" and body["confirmations"] is None
    assert body["receipt_url"] is None  # until the order is paid
    for private in (b"SECRET-REF-1", created["order_id"].encode(), b"merchant", b"metadata"):
        assert private not in raw


async def test_status_of_an_unknown_session_is_a_json_404(stack):
    status, _, raw = await get(stack, "/c/cs_test_nope/status")
    assert status == 404 and json.loads(raw)["error"]["code"] == "session_not_found"


@pytest.mark.parametrize("body, status, code, param", [
    (b"{not json", 400, "invalid_json", None),
    ({}, 422, "missing_field", "network"),
    ({"network": "sepolia"}, 422, "missing_field", "tx_hash"),
    ({"network": "sepolia", "tx_hash": EVM_HASH, "amount": "1"}, 422, "unknown_field", "amount"),
    ({"network": 7, "tx_hash": EVM_HASH}, 422, "invalid_field", "network"),
    ({"network": "ethereum", "tx_hash": EVM_HASH}, 422, "network_not_accepted", "network"),
    ({"network": "polygon-zk", "tx_hash": EVM_HASH}, 422, "network_not_accepted", "network"),
    ({"network": "sepolia", "tx_hash": "0x1234"}, 422, "invalid_tx_hash", "tx_hash"),
    ({"network": "tron-nile", "tx_hash": EVM_HASH}, 422, "invalid_tx_hash", "tx_hash"),
])
async def test_malformed_attempts_are_refused_naming_the_field(stack, checkout, body, status, code, param):
    _, created = checkout
    answer_status, answer = await post_attempt(stack, created["session_key"], body)
    assert (answer_status, answer["error"]["code"], answer["error"].get("param")) == (status, code, param)
    assert await stack.pool.fetchval("SELECT count(*) FROM payment_attempts WHERE tx_hash = $1", EVM_HASH) == 0


async def test_an_attempt_is_recorded_once_in_normal_form(stack, checkout):
    _, created = checkout
    upper = "0x" + "EF" * 32
    assert await post_attempt(stack, created["session_key"], {"network": "sepolia", "tx_hash": upper}) == (
        201, {"object": "payment_attempt", "network": "sepolia", "tx_hash": EVM_HASH, "status": "reported"})
    status, again = await post_attempt(stack, created["session_key"], {"network": "sepolia", "tx_hash": EVM_HASH})
    assert (status, again["status"]) == (200, "reported")
    row = await stack.pool.fetchrow("SELECT * FROM payment_attempts WHERE tx_hash = $1", EVM_HASH)
    assert (row["session_id"], row["order_id"], row["livemode"]) == (created["session_id"], created["order_id"], False)


async def test_one_transaction_cannot_be_reported_for_two_checkouts(stack, checkout):
    client, created = checkout
    tx_hash = "0x" + "a1" * 32
    assert (await post_attempt(stack, created["session_key"], {"network": "sepolia", "tx_hash": tx_hash}))[0] == 201
    _, other = await client.post("/b2b/v1/checkout-sessions/quick", {"amount": "3.00"})
    status, body = await post_attempt(stack, other["session_key"], {"network": "sepolia", "tx_hash": tx_hash})
    assert (status, body["error"]["code"], body["error"]["param"]) == (409, "tx_hash_already_reported", "tx_hash")


async def test_a_paid_or_unknown_checkout_takes_no_attempts(stack, checkout):
    client, created = checkout
    await pay(client, created["order_id"], "10.00")
    status, body = await post_attempt(stack, created["session_key"], {"network": "sepolia", "tx_hash": "0x" + "b2" * 32})
    assert (status, body["error"]["code"]) == (409, "session_not_open")
    status, body = await post_attempt(stack, "cs_test_nope", {"network": "sepolia", "tx_hash": "0x" + "b2" * 32})
    assert (status, body["error"]["code"]) == (404, "session_not_found")


async def test_the_page_carries_a_csp_that_allows_framing_and_no_frame_options(stack, checkout):
    _, created = checkout
    status, headers, raw = await get(stack, f"/c/{created['session_key']}")
    assert status == 200
    csp = headers["Content-Security-Policy"]
    assert "frame-ancestors *" in csp and "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "X-Frame-Options" not in headers
    assert headers["Referrer-Policy"] == "no-referrer" and headers["Cache-Control"] == "no-store"
    assert b"SECRET-REF-1" not in raw and created["order_id"].encode() not in raw


async def test_an_unknown_session_page_is_a_404_that_tells_the_sdk(stack):
    status, headers, raw = await get(stack, "/c/cs_test_nope?sdk_mode=popup&locale=ko")
    assert status == 404 and "Content-Security-Policy" in headers
    assert "유효하지 않은 링크입니다".encode() in raw and b'"code": "session_not_found"' in raw


async def test_a_failing_page_answers_500_and_tells_the_sdk(stack, checkout, monkeypatch):
    from web.pages import session

    async def broken(*args, **kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(session, "load", broken)
    status, _, raw = await get(stack, f"/c/{checkout[1]['session_key']}?sdk_mode=embed")
    assert status == 500 and b'"code": "server_error"' in raw and b"fire" not in raw


@pytest.mark.parametrize("name, kind", [
    ("index.js", "text/javascript"), ("index.cjs", "text/javascript"), ("index.global.js", "text/javascript"),
    ("index.d.ts", "text/plain"), ("index.js.map", "application/json"),
])
async def test_sdk_builds_are_served_to_any_origin(stack, name, kind):
    status, headers, raw = await get(stack, f"/sdk/{name}", headers={"Origin": "http://merchant.example"})
    assert status == 200 and headers["Content-Type"].startswith(kind) and raw
    assert headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["/sdk/package.json", "/sdk/..%2Fpackage.json", "/sdk/.hidden.js", "/assets/nope.js",
                                  "/assets/..%2F..%2Fapp.py"])
async def test_nothing_but_the_listed_files_is_served(stack, path):
    assert (await get(stack, path))[0] == 404
