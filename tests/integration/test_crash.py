"""Crash safety against real Redis and PostgreSQL, with actor workers as real processes.

A worker told to die at a named point (tests/support/crashing.py) exits with 137 there, as a kill would.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
from collections.abc import Callable
from typing import NamedTuple

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from accounts import merchants
from common import db
from common.secrets import Vault
from streams.names import Keys
from testkit.signed import Signed
from tests.conftest import database
from tests.integration.helpers import USDT
from tests.support import crashing
from web.app import init_app

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Isolated(NamedTuple):
    client: Signed
    start_worker: Callable[..., subprocess.Popen]
    settings: object  # its own Redis prefix: a bus of a test's own reaches its workers there
    pool: asyncpg.Pool  # on its own database: no other test's worker sweeps its outbox


@pytest.fixture
async def isolated(settings):
    """A web server and worker processes on a database and a Redis prefix of their own (no in-process worker)."""
    async with database(f"svc_crash_{secrets.token_hex(4)}") as url:
        own = settings.__class__(**{**{f: getattr(settings, f) for f in settings.__struct_fields__},
                                    "database_url": url,
                                    "redis_prefix": f"{settings.redis_prefix}crash{secrets.token_hex(3)}:",
                                    "partitions": 2, "lease_ttl_ms": 1000, "reply_timeout_s": 8.0})
        pool = await db.connect(url, min_size=1, max_size=4)
        server = TestServer(init_app(own))
        await server.start_server()
        http = aiohttp.ClientSession()
        pair = await merchants.create(pool, Vault(own.master_key.encode()), "Crash")
        client = Signed(http, str(server.make_url("")).rstrip("/"), pair.public_key, pair.secret_key,
                        pair.merchant_id)
        procs: list[subprocess.Popen] = []

        def start_worker(crash_point: str = "") -> subprocess.Popen:
            env = dict(os.environ, DATABASE_URL=own.database_url, REDIS_URL=own.redis_url,
                       REDIS_PREFIX=own.redis_prefix, PARTITIONS=str(own.partitions),
                       LEASE_TTL_MS=str(own.lease_ttl_ms), SERVICE_MASTER_KEY=own.master_key, LOG_LEVEL="WARNING")
            proc = subprocess.Popen(crashing.command("actors", crash_point), env=env, cwd=ROOT)
            procs.append(proc)
            return proc

        try:
            yield Isolated(client, start_worker, own, pool)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
                    proc.wait(10)
            await http.close()
            await server.close()
            await pool.close()


async def _exited(proc: subprocess.Popen, timeout: float = 15) -> int:
    for _ in range(int(timeout * 20)):
        if proc.poll() is not None:
            return proc.returncode
        await asyncio.sleep(0.05)
    raise AssertionError("worker did not exit")


async def _answer_or_retry(client, first, method, path, payload, key):
    """The caller's answer, or after a clear retryable 504 the answer to a retry with the same key."""
    status, body = first
    if status == 504:
        assert body["error"]["code"] == "command_timeout"
        status, body = await client.call(method, path, payload, headers={"Idempotency-Key": key})
    return status, body


async def test_killed_after_commit_before_ack_applies_nothing_twice_and_its_events_still_reach_the_stream(
        isolated, redis):
    client, start_worker, _, pool = isolated
    doomed = start_worker("after_commit")
    request = asyncio.create_task(client.post("/b2b/v1/checkout-sessions/quick", {"amount": "7.00"},
                                              headers={"Idempotency-Key": "crash-1"}))
    assert await _exited(doomed) == 137
    start_worker()
    status, body = await _answer_or_retry(client, await request, "POST", "/b2b/v1/checkout-sessions/quick",
                                          {"amount": "7.00"}, "crash-1")
    assert status == 201, body
    assert await pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1", client.merchant_id) == 1
    stored = await pool.fetch("SELECT type, public FROM events WHERE order_id = $1 ORDER BY seq", body["order_id"])
    assert [r["type"] for r in stored] == ["order.created", "checkout_session.created"]
    # The dead worker never published them: the next one's outbox sweep does, with the bytes the events API serves.
    events = Keys(isolated.settings.redis_prefix, isolated.settings.partitions).events
    published: list[bytes] = []
    wanted = {bytes(r["public"]) for r in stored}
    for _ in range(400):  # the sweep takes batches 5 s old, every 2 s
        # The session's database is shared: the sweep may first publish what other tests' killed workers left.
        published = [bytes(fields[b"e"]) for _, fields in await redis.xrange(events)]
        if wanted <= set(published):
            break
        await asyncio.sleep(0.05)
    assert [p for p in published if p in wanted] == [bytes(r["public"]) for r in stored]


@pytest.mark.parametrize("crash_point", ["before_commit", "commit_in_flight"])
async def test_killed_around_its_commit_loses_nothing_and_applies_nothing_twice(isolated, crash_point):
    client, start_worker, _, pool = isolated
    healthy = start_worker()
    status, created = await client.post("/b2b/v1/checkout-sessions/quick", {"amount": "7.00"})
    assert status == 201
    order_id = created["order_id"]
    await client.post(f"/b2b/v1/test-helpers/orders/{order_id}/payments",
                      {"amount": "3.00", "network": "sepolia", "token_address": USDT, "tx_hash": "0x01"})
    healthy.terminate()
    await _exited(healthy)

    doomed = start_worker(crash_point)
    path = f"/b2b/v1/test-helpers/orders/{order_id}/payments"
    payload = {"amount": "4.00", "network": "sepolia", "token_address": USDT, "tx_hash": "0x02"}
    request = asyncio.create_task(client.post(path, payload, headers={"Idempotency-Key": "crash-2"}))
    assert await _exited(doomed) == 137
    # The batch is in the database whole or not at all; what was committed before is intact.
    events_then = await pool.fetchval("SELECT count(*) FROM events WHERE order_id = $1", order_id)
    status_then = await pool.fetchval("SELECT status FROM orders WHERE order_id = $1", order_id)
    if crash_point == "before_commit":
        assert (events_then, status_then) == (4, "PARTIAL_PAID")
    else:  # the server may have committed the statement the worker sent before it died
        assert status_then == ("PARTIAL_PAID" if events_then == 4 else "PAID")

    start_worker()
    status, body = await _answer_or_retry(client, await request, "POST", path, payload, "crash-2")
    assert status == 201, body
    assert (body["status"], body["amount_paid"]) == ("PAID", "7.00")
    rows = await pool.fetch("SELECT seq, type FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    assert [r["type"] for r in rows].count("payment.settled") == 1
    assert events_then in (4, len(rows))
