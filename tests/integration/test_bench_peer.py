"""The benchmark's rival (bench/peer.py) does the pipeline's work and gives its answers: a quick session, its
payment in full, refunds, a retry with the same Idempotency-Key and a replayed signature answer as the service
does, and the rows they leave rebuild from their events. A peer that skipped work would win the benchmark."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from bench.peer import init_peer
from common.merchants import create
from service import replay
from tests.integration.helpers import QUICK, USDT, pay
from tests.support.client import Signed

REFUND_TO = "0x1111111111111111111111111111111111111111"


@pytest.fixture
async def peer(settings, stack):
    server = TestServer(init_peer(settings, pool_size=4))
    await server.start_server()
    async with aiohttp.ClientSession() as http:
        pair = await create(stack.pool, stack.vault, "Peer Coffee")
        yield Signed(http, str(server.make_url("")).rstrip("/"), pair.public_key, pair.secret_key, pair.merchant_id)
    await server.close()


async def test_the_peer_answers_a_session_a_payment_and_refunds_as_the_service_does(stack, merchant, peer):
    answers = {}
    for name, client in (("pipeline", merchant), ("peer", peer)):
        status, created = await client.post(QUICK, {"amount": "10.00", "external_ref": "A-1"},
                                            headers={"Idempotency-Key": f"k-{name}"})
        again = await client.post(QUICK, {"amount": "10.00", "external_ref": "A-1"},
                                  headers={"Idempotency-Key": f"k-{name}"})
        paid = await pay(client, created["order_id"], "10.00")
        refunds = [await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds", {
            "order_id": created["order_id"], "amount": amount, "reason": "bench", "refund_to_address": REFUND_TO,
            "refund_network": "ethereum", "refund_token_address": USDT}) for amount in ("4.00", "7.00")]
        status_read, order = await client.get(f"/b2b/v1/orders/{created['order_id']}")
        answers[name] = {
            "created": (status, sorted(created)), "retry": (again[0], again[1]["order_id"] == created["order_id"]),
            "paid": paid[0], "refunds": [(s, b.get("status") or b["error"]["code"]) for s, b in refunds],
            "order": (status_read, order["status"], order["amount_paid"], [p["amount"] for p in order["payments"]]),
        }
        async with stack.pool.acquire() as conn:
            found = await replay.timeline(conn, created["order_id"])
        assert found.matches, found.first_difference
    assert answers["peer"] == answers["pipeline"]
    assert answers["peer"]["refunds"] == [(201, "APPROVED"), (409, "amount_exceeds_refundable")]
    assert answers["peer"]["order"] == (200, "PAID", "10.00", ["10.00"])
