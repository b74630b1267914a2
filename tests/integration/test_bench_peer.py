"""The benchmark's rival (bench/peer.py) does the pipeline's work and gives its answers: a quick session, a retry
with its Idempotency-Key and a reuse of the key with another body, a replayed signature, its payment in full and
refunds, as the service does; its events follow each other without a gap and reach the events stream, and
concurrent refunds never take back more than was paid. Every test runs against both of the peer's modes: group
commit (with a wide window, so that concurrent requests share a batch) and one statement per request. A peer that
skipped work would win the benchmark."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import asyncpg
import msgspec
import pytest
from aiohttp.test_utils import TestServer

from accounts.merchants import create
from bench.peer import MODES, init_peer
from common.ids import random_id
from testkit.signed import Signed
from tests.conftest import RUNTIME_ROLE, owner_url
from tests.integration.helpers import QUICK, USDT, pay, quick

REFUND_TO = "0x1111111111111111111111111111111111111111"


@pytest.fixture(params=MODES)
async def peer(request, settings, stack):
    """The rival runs as the schema's owner, since it makes a schema of its own, which the service's role may not;
    the test reads that schema as the service's role."""
    owner = owner_url(settings.database_url)
    # 50 ms: the requests a test sends together meet in one batch even on a busy machine.
    server = TestServer(init_peer(msgspec.structs.replace(settings, database_url=owner), pool_size=4,
                                  mode=request.param, window_ms=50))
    await server.start_server()
    conn = await asyncpg.connect(owner)
    try:
        await conn.execute(f"GRANT USAGE ON SCHEMA peer TO {RUNTIME_ROLE};"
                           f" GRANT SELECT ON ALL TABLES IN SCHEMA peer TO {RUNTIME_ROLE}")
    finally:
        await conn.close()
    async with aiohttp.ClientSession() as http:
        pair = await create(stack.pool, stack.vault, "Peer Coffee")
        yield Signed(http, str(server.make_url("")).rstrip("/"), pair.public_key, pair.secret_key, pair.merchant_id)
    await server.close()


async def refund(client: Signed, order_id: str, amount: str, reason: str = "bench") -> tuple[int, dict]:
    return await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds", {
        "order_id": order_id, "amount": amount, "reason": reason, "refund_to_address": REFUND_TO,
        "refund_network": "sepolia", "refund_token_address": USDT})


async def replayed(client: Signed, key: str | None) -> tuple[int, dict]:
    """The second sending of one signed quick session, with or without an Idempotency-Key."""
    raw = json.dumps({"amount": "3.00"}).encode()
    headers = client.headers("POST", QUICK, raw) | ({"Idempotency-Key": key} if key else {})
    for _ in range(2):
        async with client.http.post(client.base_url + QUICK, data=raw, headers=headers) as resp:
            answer = resp.status, await resp.json()
    return answer


async def test_the_peer_answers_a_session_a_payment_and_refunds_as_the_service_does(stack, merchant, peer):
    answers = {}
    for name, client in (("pipeline", merchant), ("peer", peer)):
        status, created = await client.post(QUICK, {"amount": "10.00", "external_ref": "A-1"},
                                            headers={"Idempotency-Key": f"k-{name}"})
        again = await client.post(QUICK, {"amount": "10.00", "external_ref": "A-1"},
                                  headers={"Idempotency-Key": f"k-{name}"})
        reused = await client.post(QUICK, {"amount": "11.00"}, headers={"Idempotency-Key": f"k-{name}"})
        repeats = [await replayed(client, f"r-{name}"), await replayed(client, None)]
        paid = await pay(client, created["order_id"], "10.00")
        refunds = [await refund(client, created["order_id"], amount) for amount in ("4.00", "7.00")]
        status_read, order = await client.get(f"/b2b/v1/orders/{created['order_id']}")
        answers[name] = {
            "created": (status, sorted(created)), "retry": (again[0], again[1]["order_id"] == created["order_id"]),
            "reused": (reused[0], reused[1]["error"]["code"]),
            "repeats": [(s, sorted(b) if s == 201 else b["error"]["code"]) for s, b in repeats],
            "paid": paid[0], "refunds": [(s, b.get("status") or b["error"]["code"]) for s, b in refunds],
            "order": (status_read, order["status"], order["amount_paid"], [p["amount"] for p in order["payments"]]),
        }
    assert answers["peer"] == answers["pipeline"]
    assert answers["peer"]["refunds"] == [(201, "APPROVED"), (409, "amount_exceeds_refundable")]
    assert answers["peer"]["order"] == (200, "PAID", "10.00", ["10.00"])
    assert again[1] == created  # the peer's retry: the recorded answer


async def _events_of(stack, order_id: str) -> list[int]:
    return [r["seq"] for r in await stack.pool.fetch("SELECT seq FROM peer.events WHERE order_id = $1 ORDER BY seq",
                                                     order_id)]


async def _published(redis, keys, order_id: str) -> list[int]:
    """The seq of each of the order's events on the events stream, in the order they were added."""
    entries = (msgspec.json.decode(fields[b"e"]) for _, fields in await redis.xrange(keys.events))
    return [e["seq"] for e in entries if e["order_id"] == order_id]


async def test_the_peers_events_follow_each_other_and_reach_the_events_stream(stack, peer, redis, keys):
    order_id = (await quick(peer))["order_id"]
    await pay(peer, order_id, "10.00")
    assert (await refund(peer, order_id, "1.00"))[0] == 201
    stored = await _events_of(stack, order_id)
    assert stored == list(range(1, 8))  # created, session, payment received, session completed, settled, 2 of a refund
    for _ in range(100):
        if await stack.pool.fetchval("SELECT count(*) FROM peer.outbox") == 0:
            break
        await asyncio.sleep(0.05)
    assert await stack.pool.fetchval("SELECT count(*) FROM peer.outbox") == 0
    assert await _published(redis, keys, order_id) == stored


async def test_concurrent_refunds_of_the_peer_never_exceed_what_was_paid(stack, peer):
    order_id = (await quick(peer))["order_id"]
    await pay(peer, order_id, "10.00")
    answers = await asyncio.gather(*(refund(peer, order_id, "1.00", f"race-{i}") for i in range(20)))
    assert sorted(status for status, _ in answers) == [201] * 10 + [409] * 10
    assert {b["error"]["code"] for s, b in answers if s == 409} == {"amount_exceeds_refundable"}
    assert await stack.pool.fetchval("SELECT sum(amount) FROM peer.refunds WHERE order_id = $1", order_id) == 10_000_000
    assert await _events_of(stack, order_id) == list(range(1, 5 + 2 * 10 + 1))


async def _burst(client: Signed, key: str, bodies: list[dict]) -> list[tuple[int, str]]:
    """The bodies sent together under one key (each signed afresh), answered as (status, order id or error)."""
    answers = await asyncio.gather(*(client.post(QUICK, body, headers={"Idempotency-Key": key}) for body in bodies))
    return [(s, b["order_id"] if s == 201 else b["error"]["code"]) for s, b in answers]


async def test_a_key_repeated_within_one_batch_is_answered_the_first_requests_answer(stack, merchant, peer):
    answers, run = {}, random_id("run")  # the peer's tables outlive a test: its names are the run's own
    for name, client, table in (("pipeline", merchant, "public"), ("peer", peer, "peer")):
        name = f"{name}-{run}"
        same = await _burst(client, f"burst-{name}", [{"amount": "5.00", "external_ref": f"burst-{name}"}] * 4)
        other = {"amount": "6.00", "external_ref": f"other-{name}"}
        mixed = await _burst(client, f"mixed-{name}", [other, other, {"amount": "7.00"}])
        made = await stack.pool.fetchval(f"SELECT count(*) FROM {table}.orders WHERE external_ref = $1",
                                         f"burst-{name}")
        answers[table] = {"same": ({s for s, _ in same}, len({o for _, o in same}), made),
                          "mixed": {(s, o if s != 201 else "order") for s, o in mixed},
                          "mixed orders": len({o for s, o in mixed if s == 201})}
    # Which of the two bodies comes first is the race's; the other is answered 409 idempotency_key_reused.
    assert answers["peer"] == answers["public"] == {
        "same": ({201}, 1, 1), "mixed": {(201, "order"), (409, "idempotency_key_reused")}, "mixed orders": 1}
