"""Every event type the order actor can emit, produced by a real flow and seen by a real receiver.

The expected set is read from the actor's event union, so a new event type fails this test until
a flow below produces it. Flows go through the B2B API, the buyer's hosted refund pages and the
scheduler's sweep. Two facts come from processes with no HTTP route and are sent on the command
bus as those processes send them: accept-and-resolve (a dashboard action; docs/spec.md §3.3 keeps it out of
the REST API) and a refund transaction found failed (the chain watcher's verdict).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import typing

import redis.asyncio as aioredis

from actors import messages as m
from actors.bus import CommandBus
from common.clock import utcnow
from common.ids import random_id
from streams.names import Keys
from tests.integration.helpers import USDT, expire_due, pay, quick, until
from tests.integration.test_refunds_api import DEST, customer_refund, merchant_refund
from tests.webhooks.support import register

EXPECTED = {event.__struct_config__.tag for event in typing.get_args(m.Event)}


async def _ok(answer, status: int = 200) -> dict:
    got, body = await answer
    assert got == status, body
    return body


async def _as_process(stack, command: m.Command) -> None:
    """Send a command as the dashboard or a chain watcher does: straight to the order's actor."""
    s = stack.settings
    redis = aioredis.Redis.from_url(s.redis_url)
    bus = CommandBus(redis, Keys(s.redis_prefix, s.partitions), "test-process", 5)
    await bus.start()
    try:
        reply = await bus.ask(m.Envelope(command_id=random_id("cmd"), command=command))
        assert reply.ok, reply.error
    finally:
        await bus.stop()
        await redis.aclose()


def _common(client, order_id: str) -> dict:
    return {"order_id": order_id, "merchant_id": client.merchant_id, "livemode": False, "at": utcnow()}


async def _hosted(stack, client, token: str, path: str, form: dict) -> dict:
    """A buyer's post on the hosted refund-request page, with the page's own CSRF token."""
    async with stack.http.get(f"{client.base_url}/refund-request/{token}") as page:
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', await page.text()).group(1)
    async with stack.http.post(f"{client.base_url}/refund-request/{token}{path}", json={**form, "csrf": csrf}) as resp:
        body = await resp.json()
        assert resp.status in (200, 201), body
        return body


async def _order_flows(stack, client) -> str:
    paid = (await quick(client, external_ref="ERP-1"))["order_id"]
    await _ok(client.post("/b2b/v1/checkout-sessions", {"order_id": paid}), 201)  # supersedes the first session
    await _ok(pay(client, paid, "4.00"), 201)
    await _ok(pay(client, paid, "6.00"), 201)
    canceled = (await quick(client, external_ref="ERP-2"))["order_id"]
    await _ok(client.patch(f"/b2b/v1/orders/{canceled}/cancel"))
    timed_out = (await quick(client, ttl_seconds=60, external_ref="ERP-3"))["order_id"]
    await expire_due(stack, 61)
    await until(client, timed_out, lambda o: o["status"] == "CANCELED")
    await _ok(client.patch(f"/b2b/v1/orders/{timed_out}/reopen"))
    underpaid = (await quick(client))["order_id"]
    await _ok(pay(client, underpaid, "4.00"), 201)
    await _as_process(stack, m.ResolveOrder(**_common(client, underpaid)))
    return paid


async def _refund_flows(stack, client, order_id: str) -> None:
    executed = await _ok(merchant_refund(client, order_id, "1.00"), 201)
    await _ok(client.post(f"/b2b/v1/test-helpers/refunds/{executed['refund_id']}/execute"))
    withdrawn = await _ok(merchant_refund(client, order_id, "1.00"), 201)
    await _ok(client.post(f"/b2b/v1/refunds/{withdrawn['refund_id']}/cancel"))
    pending = await _ok(customer_refund(client, order_id, "1.00"), 201)
    await _ok(client.post(f"/b2b/v1/refunds/{pending['refund_id']}/reject", {"reason": "not eligible"}))
    broadcast = await _ok(merchant_refund(client, order_id, "1.00"), 201)
    tx = {"tx_hash": "0x" + secrets.token_hex(32), "network": "sepolia", "token_address": USDT}
    await _ok(client.post(f"/b2b/v1/refunds/{broadcast['refund_id']}/submit-tx", tx), 202)
    await _as_process(stack, m.FailRefundTx(**_common(client, order_id), refund_id=broadcast["refund_id"],
                                            network=tx["network"], tx_hash=tx["tx_hash"], reason="reverted"))
    # A card refund the provider refused (the card refund sender's report), retried by the merchant.
    card_paid = (await quick(client))["order_id"]
    await _as_process(stack, m.ConfirmPayment(**_common(client, card_paid), payment_id=random_id("pay"),
                                              network="card", tx_hash=f"pi_{secrets.token_hex(8)}", token_address="",
                                              amount=10_000_000))
    refused = await _ok(merchant_refund(client, card_paid, "1.00", refund_network="card"), 201)
    await _as_process(stack, m.RecordCardRefund(**_common(client, card_paid), refund_id=refused["refund_id"],
                                                provider_refund_id="", status="failed", reason="declined"))
    await _ok(client.post(f"/b2b/v1/refunds/{refused['refund_id']}/retry"))


async def _token_flows(stack, client, order_id: str) -> None:
    mint = f"/b2b/v1/merchants/{client.merchant_id}/refund-requests"
    body = {"ref_type": "order_id", "ref_value": order_id, "amount": "1.00"}
    canceled = await _ok(client.post(mint, body), 201)
    await _ok(client.post(f"/b2b/v1/refund-requests/{canceled['token']}/cancel", {"reason": "sent by mistake"}))
    submitted = await _ok(client.post(mint, body), 201)
    await _hosted(stack, client, submitted["token"], "", {
        "refund_to_address": DEST["refund_to_address"], "refund_network": DEST["refund_network"],
        "refund_token_address": DEST["refund_token_address"], "amount": "0.50", "reason": "too big"})
    lapsed = await _ok(client.post(mint, {**body, "ttl_seconds": 1}), 201)
    await expire_due(stack, 5)
    for _ in range(50):  # the expiry command goes through the actor
        status, token = await client.get(f"/b2b/v1/refund-requests/{lapsed['token']}")
        if token["status"] != "ACTIVE":
            break
        await asyncio.sleep(0.05)
    await _hosted(stack, client, lapsed["token"], "/renewal", {"customer_note": "please"})
    await _ok(client.post(f"/b2b/v1/refund-requests/{lapsed['token']}/renewal/approve"), 201)


async def test_every_event_type_reaches_the_receiver(stack, merchant, receiver, dispatcher):
    r = await receiver()
    await register(merchant, r.url)
    d = await dispatcher()
    stop = asyncio.Event()
    running = asyncio.create_task(d.run(stop))
    try:
        paid = await _order_flows(stack, merchant)
        await _refund_flows(stack, merchant, paid)
        await _token_flows(stack, merchant, paid)
        for _ in range(200):
            seen = {json.loads(req.body)["type"] for req in r.requests}
            if seen >= EXPECTED:
                break
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await running
    events = [json.loads(req.body) for req in r.requests]
    assert {e["type"] for e in events} == EXPECTED, f"no flow produced {sorted(EXPECTED - seen)}"
    assert "payment.failed" not in EXPECTED
    assert len({e["id"] for e in events}) == len(events)  # each event once
    for req, event in zip(r.requests, events):
        assert b"external_ref" not in req.body and b"ERP-" not in req.body
        assert event["data"]["order_id"] and req.headers["x-service-event-id"] == event["id"]
    by_type = {e["type"]: e["data"] for e in events}
    sources = {e["data"]["source"] for e in events if e["type"] == "refund_request.created"}
    assert sources == {"b2b", "renewal"}
    assert by_type["refund_request.canceled"]["reason"] == "sent by mistake"
    renewed = by_type["refund_request.renewed"]
    assert renewed["old_token"].startswith("rfqt_") and renewed["new_token"].startswith("rfqt_")
    assert renewed["old_token"] != renewed["new_token"]
    assert by_type["payment.refund.executed"]["refund_id"] and by_type["payment.refund.executed"]["amount"] == "1.00"
