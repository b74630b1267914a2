"""docs/spec.md §3.3 through the HTTP API: each stated move a case, with the events it records."""

from __future__ import annotations

import pytest

from tests.integration.helpers import expire_due, order, pay, quick, until


async def _events(stack, order_id: str) -> list[str]:
    rows = await stack.pool.fetch("SELECT type FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    return [r["type"] for r in rows]


async def _pending(stack, client):
    return (await quick(client))["order_id"]


async def _partial(stack, client):
    order_id = await _pending(stack, client)
    assert (await pay(client, order_id, "4.00"))[0] == 201
    return order_id


async def _timed_out(stack, client):
    order_id = (await quick(client, ttl_seconds=60))["order_id"]
    await expire_due(stack, 61)
    body = await until(client, order_id, lambda o: o["status"] == "CANCELED")
    assert body["metadata"]["canceled_reason"] == "payment_timeout"
    return order_id


async def _trigger_full(stack, client, order_id):
    return await pay(client, order_id, "10.00")


async def _trigger_less(stack, client, order_id):
    return await pay(client, order_id, "4.00")


async def _trigger_residual(stack, client, order_id):
    status, session = await client.post("/b2b/v1/checkout-sessions", {"order_id": order_id, "amount_due": "6.00"})
    assert status == 201 and session["amount_due"] == "6.00", session
    return await pay(client, order_id, "6.00")


async def _trigger_ttl(stack, client, order_id):
    await expire_due(stack, 3600)
    return 200, await until(client, order_id, lambda o: o["status"] != "PENDING")


async def _trigger_cancel(stack, client, order_id):
    return await client.patch(f"/b2b/v1/orders/{order_id}/cancel")


async def _trigger_reopen(stack, client, order_id):
    status, body = await client.patch(f"/b2b/v1/orders/{order_id}/reopen")
    assert body["session_key"] and body["checkout_url"].endswith(body["session_key"]), body
    return status, body["order"]


# (name, setup, trigger, http status, order status, amount_paid, canceled_reason, last events)
ROWS = [
    ("pending-full-settles-paid", _pending, _trigger_full, 201, "PAID", "10.00", None,
     ["payment.received", "checkout_session.completed", "payment.settled"]),
    ("pending-less-than-total-partial", _pending, _trigger_less, 201, "PARTIAL_PAID", "4.00", None,
     ["payment.received", "order.partially_paid"]),
    ("partial-residual-session-settles-paid", _partial, _trigger_residual, 201, "PAID", "10.00", None,
     ["payment.received", "checkout_session.completed", "payment.settled"]),
    ("pending-ttl-expires-canceled", _pending, _trigger_ttl, 200, "CANCELED", "0.00", "payment_timeout",
     ["checkout_session.expired", "order.canceled"]),
    ("unpaid-cancel-call-canceled", _pending, _trigger_cancel, 200, "CANCELED", "0.00", "merchant_canceled",
     ["checkout_session.expired", "order.canceled"]),
    ("timeout-canceled-reopen-pending", _timed_out, _trigger_reopen, 200, "PENDING", "0.00", None,
     ["order.reopened", "checkout_session.created"]),
]


@pytest.mark.parametrize("setup,trigger,http,status,paid,reason,events", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
async def test_stated_move(stack, merchant, setup, trigger, http, status, paid, reason, events):
    order_id = await setup(stack, merchant)
    got, body = await trigger(stack, merchant, order_id)
    assert got == http, body
    assert body["status"] == status
    stored = await order(merchant, order_id)
    assert (stored["status"], stored["amount_paid"]) == (status, paid)
    assert stored["metadata"].get("canceled_reason") == reason
    recorded = await _events(stack, order_id)
    assert recorded[-len(events):] == events
    assert recorded.count("payment.settled") == (1 if status == "PAID" else 0)


REFUSED = [
    ("cancel-paid", "paid", "PATCH", "cancel", 409, "order_not_cancelable"),
    ("reopen-merchant-canceled", "canceled", "PATCH", "reopen", 409, "order_not_reopenable"),
    ("reopen-pending", "pending", "PATCH", "reopen", 409, "order_not_reopenable"),
    ("cancel-canceled", "canceled", "PATCH", "cancel", 409, "order_not_cancelable"),
]


@pytest.mark.parametrize("state,method,action,status,code", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
async def test_refused_move(stack, merchant, state, method, action, status, code):
    order_id = (await quick(merchant))["order_id"]
    if state == "paid":
        await pay(merchant, order_id, "10.00")
    if state == "canceled":
        await merchant.patch(f"/b2b/v1/orders/{order_id}/cancel")
    before = await _events(stack, order_id)
    got, body = await merchant.call(method, f"/b2b/v1/orders/{order_id}/{action}")
    assert (got, body["error"]["code"]) == (status, code)
    assert await _events(stack, order_id) == before


async def test_new_session_on_paid_order_refused(merchant):
    order_id = (await quick(merchant))["order_id"]
    await pay(merchant, order_id, "10.00")
    status, body = await merchant.post("/b2b/v1/checkout-sessions", {"order_id": order_id})
    assert (status, body["error"]["code"]) == (409, "order_not_payable")


async def test_residual_session_must_match_the_residual(merchant):
    order_id = (await quick(merchant))["order_id"]
    await pay(merchant, order_id, "4.00")
    status, body = await merchant.post("/b2b/v1/checkout-sessions", {"order_id": order_id, "amount_due": "5.00"})
    assert (status, body["error"]["code"], body["error"]["param"]) == (422, "amount_due_mismatch", "amount_due")


async def test_partial_session_expiry_keeps_partial_paid(stack, merchant):
    order_id = (await quick(merchant, ttl_seconds=60))["order_id"]
    await pay(merchant, order_id, "4.00")
    await expire_due(stack, 61)
    body = await until(merchant, order_id, lambda o: o["sessions"][0]["status"] == "EXPIRED")
    assert (body["status"], body["amount_due"]) == ("PARTIAL_PAID", "6.00")


async def test_test_helper_refused_with_live_key(stack):
    test_client = await stack.merchant("Live helper")
    live = await stack.other_mode(test_client, livemode=True)
    _, created = await live.post("/b2b/v1/checkout-sessions/quick", {"amount": "1.00"})
    status, body = await pay(live, created["order_id"], "1.00")
    assert (status, body["error"]["code"]) == (403, "test_mode_only")
    assert (await order(live, created["order_id"]))["amount_paid"] == "0.00"


async def test_apscheduler_drives_the_expiry(stack, merchant):
    """The scheduler process's own job, with its clock an hour ahead, cancels the order."""
    from datetime import timedelta

    import redis.asyncio as aioredis

    from actors.bus import CommandBus
    from common.clock import utcnow
    from service.scheduler import Timers, start
    from streams.names import Keys

    order_id = (await quick(merchant, ttl_seconds=60))["order_id"]
    redis = aioredis.Redis.from_url(stack.settings.redis_url)
    bus = CommandBus(redis, Keys(stack.settings.redis_prefix, stack.settings.partitions), "aps", 5)
    await bus.start()
    scheduler = start(Timers(stack.pool, bus, clock=lambda: utcnow() + timedelta(seconds=3600)), 0.1)
    try:
        body = await until(merchant, order_id, lambda o: o["status"] == "CANCELED")
    finally:
        scheduler.shutdown(wait=False)
        await bus.stop()
        await redis.aclose()
    assert body["metadata"]["canceled_reason"] == "payment_timeout"
    assert body["sessions"][0]["status"] == "EXPIRED"


@pytest.mark.parametrize("field,value,code", [
    ("network", "nosuchnet", "unknown_network"),
    ("token_address", "xyz", "unknown_token"),
])
async def test_test_helper_refuses_what_no_watcher_could_report(merchant, field, value, code):
    order_id = (await quick(merchant))["order_id"]
    status, body = await pay(merchant, order_id, "10.00", **{field: value})
    assert (status, body["error"]["code"], body["error"]["param"]) == (422, code, field)
    assert (await order(merchant, order_id))["status"] == "PENDING"


async def test_test_helper_payment_is_refundable_in_its_own_token(merchant):
    order_id = (await quick(merchant))["order_id"]
    # Any spelling of a known token is recorded in the registry's form, so a refund in "the original token" works.
    status, paid = await pay(merchant, order_id, "10.00", token_address="0xaa8e23fb1079ea71e0a56f48a2aa51851d8433d0")
    assert (status, paid["payments"][0]["token_address"]) == (201, "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0")
    status, refund = await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refunds", {
        "order_id": order_id, "amount": "1.00", "refund_to_address": "0x000000000000000000000000000000000000dEaD"})
    assert status == 201, refund
