"""Orders and sessions (docs/spec.md §4.2): shapes, numbering, listing, Idempotency-Key, OpenAPI."""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.integration.helpers import QUICK, expire_due, order, pay, quick, until
from web.api.routes import PREFIX, ROUTES


async def test_quick_session_answer(stack, merchant):
    created = await quick(merchant, external_ref="shop-42", success_url="https://shop.example/ok",
                          cancel_url="https://shop.example/cancel")
    assert set(created) >= {"order_id", "order_number", "session_key", "checkout_url", "expires_at"}
    assert created["checkout_url"] == f"{stack.settings.checkout_base()}/c/{created['session_key']}"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created["expires_at"])
    async with stack.http.get(created["checkout_url"].replace(stack.settings.checkout_base(), stack.base_url)) as resp:
        assert resp.status == 200
        assert "10.00 USD" in await resp.text()


async def test_line_items_sum_and_full_order_read(merchant):
    items = [{"name": "Tea", "unit_amount": "2.50", "quantity": 3}, {"name": "Cup", "unit_amount": "0.125"}]
    status, created = await merchant.post(QUICK, {"line_items": items, "external_ref": "r1", "metadata": {"k": "v"}})
    assert status == 201, created
    body = await order(merchant, created["order_id"])
    assert body["amount_owed"] == "7.625"
    assert [(i["name"], i["quantity"], i["unit_amount"], i["amount"]) for i in body["line_items"]] == [
        ("Tea", 3, "2.50", "7.50"), ("Cup", 1, "0.125", "0.125")]
    assert (body["external_ref"], body["metadata"], body["status"]) == ("r1", {"k": "v"}, "PENDING")
    assert body["amount_paid"] == "0.00" and body["amount_refunded"] == "0.00"
    assert [s["status"] for s in body["sessions"]] == ["OPEN"]


@pytest.mark.parametrize("field,price", [("line_items", "unit_price"), ("items", "price"), ("items", "unit_amount")])
async def test_line_items_by_other_names(merchant, field, price):
    status, created = await merchant.post(QUICK, {field: [{"name": "Tea", price: "2.50", "quantity": 2}]})
    assert status == 201, created
    body = await order(merchant, created["order_id"])
    assert body["amount_owed"] == "5.00" and body["line_items"][0]["unit_amount"] == "2.50"


async def test_order_without_session(merchant):
    status, body = await merchant.post("/b2b/v1/orders", {"amount": "3.00"})
    assert status == 201 and body["sessions"] == [] and body["status"] == "PENDING"
    status, session = await merchant.post("/b2b/v1/checkout-sessions", {"order_id": body["order_id"]})
    assert status == 201 and session["amount_due"] == "3.00"


async def test_order_numbers_per_merchant_increase(stack):
    first, second = await stack.merchant("A"), await stack.merchant("B")
    a = [int((await quick(first))["order_number"]) for _ in range(3)]
    b = int((await quick(second))["order_number"])
    assert a == [1001, 1002, 1003] and b == 1001


async def test_concurrent_orders_get_distinct_consecutive_numbers(stack):
    client = await stack.merchant("Busy")
    created = await asyncio.gather(*(quick(client) for _ in range(20)))
    assert sorted(int(c["order_number"]) for c in created) == list(range(1001, 1021))


async def test_each_mode_numbers_its_own_orders(stack):
    test_client = await stack.merchant("Modes")
    live_client = await stack.other_mode(test_client, livemode=True)
    assert [(await quick(c))["order_number"] for c in (test_client, live_client, test_client)] == ["1001", "1001", "1002"]


async def test_payment_history_and_retry_session(merchant):
    order_id = (await quick(merchant))["order_id"]
    status, retry = await merchant.post("/b2b/v1/checkout-sessions", {"order_id": order_id})
    assert status == 201
    await pay(merchant, order_id, "4.00", tx_hash="0xabc")
    body = await order(merchant, order_id)
    assert [s["status"] for s in body["sessions"]] == ["SUPERSEDED", "OPEN"]
    assert [(p["amount"], p["tx_hash"], p["network"], p["session_id"]) for p in body["payments"]] == [
        ("4.00", "0xabc", "sepolia", retry["session_id"])]
    assert body["amount_due"] == "6.00"


async def test_listing_pages_and_filters(stack):
    client = await stack.merchant("Lister")
    ids = [(await quick(client))["order_id"] for _ in range(5)]
    await client.patch(f"/b2b/v1/orders/{ids[0]}/cancel")
    seen, cursor = [], None
    while True:
        status, page = await client.get("/b2b/v1/orders?limit=2" + (f"&cursor={cursor}" if cursor else ""))
        assert status == 200 and len(page["data"]) <= 2
        seen += [o["order_id"] for o in page["data"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == list(reversed(ids))
    status, canceled = await client.get("/b2b/v1/orders?status=CANCELED")
    assert [o["order_id"] for o in canceled["data"]] == [ids[0]]


async def test_idempotency_same_key_same_body_returns_first_response(stack):
    client = await stack.merchant("Idem")
    key = {"Idempotency-Key": "create-1"}
    first = await client.post(QUICK, {"amount": "9.00"}, headers=key)
    second = await client.post(QUICK, {"amount": "9.00"}, headers=key)
    assert first[0] == second[0] == 201
    assert first[1] == second[1]
    status, listing = await client.get("/b2b/v1/orders")
    assert len(listing["data"]) == 1


async def test_idempotency_same_key_other_body_conflicts(stack):
    client = await stack.merchant("Idem2")
    key = {"Idempotency-Key": "create-2"}
    assert (await client.post(QUICK, {"amount": "9.00"}, headers=key))[0] == 201
    status, body = await client.post(QUICK, {"amount": "9.50"}, headers=key)
    assert (status, body["error"]["code"], body["error"]["param"]) == (409, "idempotency_key_reused", "Idempotency-Key")
    status, listing = await client.get("/b2b/v1/orders")
    assert [o["amount"] for o in listing["data"]] == ["9.00"]


async def test_idempotency_concurrent_duplicates_apply_once(stack):
    client = await stack.merchant("Idem3")
    order_id = (await quick(client))["order_id"]
    key = {"Idempotency-Key": "pay-once"}
    answers = await asyncio.gather(*[pay(client, order_id, "2.00", headers=key) for _ in range(10)])
    assert {status for status, _ in answers} == {201}
    assert (await order(client, order_id))["amount_paid"] == "2.00"


async def test_idempotency_on_patch(stack):
    client = await stack.merchant("Idem4")
    order_id = (await quick(client))["order_id"]
    key = {"Idempotency-Key": "cancel-1"}
    first = await client.patch(f"/b2b/v1/orders/{order_id}/cancel", headers=key)
    second = await client.patch(f"/b2b/v1/orders/{order_id}/cancel", headers=key)
    assert first == second and first[0] == 200
    third = await client.patch(f"/b2b/v1/orders/{order_id}/cancel", headers={"Idempotency-Key": "cancel-2"})
    assert third[0] == 409


async def test_openapi_matches_the_routes(stack):
    async with stack.http.get(stack.base_url + "/b2b/v1/openapi.json") as resp:
        doc = await resp.json()
    documented = {(method.upper(), path) for path, ops in doc["paths"].items() for method in ops}
    served = {
        (r.method, r.resource.canonical)
        for r in stack.server.app.router.routes()
        if r.resource is not None and r.resource.canonical.startswith(PREFIX) and r.method != "HEAD"
        and r.resource.canonical != PREFIX + "/openapi.json"
    }
    assert documented == served
    assert {(r.method, PREFIX + r.path) for r in ROUTES} == served
    quick_schema = doc["paths"][QUICK]["post"]["requestBody"]["content"]["application/json"]["schema"]
    name = quick_schema["$ref"].rsplit("/", 1)[-1]
    assert {"amount", "line_items", "external_ref"} <= set(doc["components"]["schemas"][name]["properties"])


@pytest.mark.parametrize("path", [p for p in {PREFIX + r.path for r in ROUTES}])
async def test_every_documented_route_requires_a_signature(stack, path):
    method = next(r.method for r in ROUTES if PREFIX + r.path == path)
    async with stack.http.request(method, stack.base_url + path.replace("{", "x").replace("}", "")) as resp:
        assert resp.status == 401
        assert (await resp.json())["error"]["code"] == "missing_header"


async def test_cancel_keeps_the_merchants_note(stack, merchant):
    created = await quick(merchant)
    status, body = await merchant.patch(f"/b2b/v1/orders/{created['order_id']}/cancel", {"reason": "buyer phoned"})
    assert status == 200
    assert body["metadata"] == {"canceled_reason": "merchant_canceled", "cancel_note": "buyer phoned"}
    status, body = await merchant.patch(f"/b2b/v1/orders/{created['order_id']}/cancel", {"reason": 5})
    assert (status, body["error"]["param"]) == (422, "reason")


async def test_a_one_second_session_is_canceled_by_the_next_sweep(stack, merchant):
    created = await quick(merchant, ttl_seconds=1)
    stack.clock.advance(1.1)
    assert await expire_due(stack, 0) >= 1  # the scheduler's sweep at the real time
    body = await until(merchant, created["order_id"], lambda o: o["status"] == "CANCELED")
    assert body["metadata"]["canceled_reason"] == "payment_timeout"
    assert [s["status"] for s in body["sessions"]] == ["EXPIRED"]
