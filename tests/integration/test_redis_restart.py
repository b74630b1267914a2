"""Redis restarted in the middle of traffic, on a redis-server of the test's own.

Without persistence the processes make their streams and groups again and serve within 10 s, with no
restart of their own; requests caught in flight get 503 or 504 with their command id, and retries with
their Idempotency-Key converge on one order each, and a key answered before the loss is answered with its order
after it. With AOF, nothing acknowledged is lost.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time

import pytest
import redis.asyncio as aioredis

from tests.support.processes import QUICK, created, deployment, free_port

SERVER = shutil.which("redis-server", path="/usr/bin") or shutil.which("redis-server")


class RedisServer:
    def __init__(self, workdir, *options: str):
        self.port = free_port()
        self.args = [SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(workdir),
                     "--save", "", *options]
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL)
        client = aioredis.Redis.from_url(self.url)
        try:
            for _ in range(100):
                try:
                    if await client.ping():
                        return
                except Exception:  # noqa: BLE001 - not serving yet, whatever the client makes of it
                    await asyncio.sleep(0.05)
            raise AssertionError("redis-server did not start")
        finally:
            await client.aclose()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: with AOF on, the server syncs the file before it exits
            self.proc.wait(10)


@pytest.fixture
async def redis_server(tmp_path, request):
    server = RedisServer(tmp_path, *request.param)
    await server.start()
    yield server
    server.stop()


async def _traffic(client, prefix: str, count: int) -> list[dict]:
    async def later(n: int) -> dict:
        await asyncio.sleep(n * 0.02)
        return await created(client, f"{prefix}-{n}", f"{n + 1}.00", attempts=80)

    return await asyncio.gather(*[later(n) for n in range(count)])


async def _orders_of(pool, merchant_id: str) -> list[str]:
    return [r["order_id"] for r in await pool.fetch("SELECT order_id FROM orders WHERE merchant_id = $1", merchant_id)]


@pytest.mark.parametrize("redis_server", [("--appendonly", "no")], indirect=True)
async def test_redis_restarted_without_its_data(redis_server, caplog):
    async with deployment(redis_server.url, ("web", "actors", "webhooks")) as (procs, client, pool):
        traffic = asyncio.create_task(_traffic(client, "lost", 150))
        await asyncio.sleep(1)
        redis_server.stop()
        await asyncio.sleep(0.5)
        await redis_server.start()
        restarted = time.monotonic()
        status, body = 0, None
        while time.monotonic() - restarted < 10:
            status, body = await client.post(QUICK, {"amount": "99.00"})
            if status == 201:
                break
            await asyncio.sleep(0.2)
        assert status == 201, (status, body)
        sessions = await traffic
        assert all(proc.poll() is None for proc in procs.procs.values())  # none had to restart
        order_ids = [s["order_id"] for s in sessions]
        assert len(set(order_ids)) == 150
        stored = set(await _orders_of(pool, client.merchant_id))
        assert set(order_ids) <= stored
        assert len(stored) == 150 + 2  # the traffic, the first call that found the service up, the one above


@pytest.mark.parametrize("redis_server", [("--appendonly", "no")], indirect=True)
async def test_a_key_answered_before_redis_lost_its_data_is_answered_with_the_same_order(redis_server):
    async with deployment(redis_server.url, ("web", "actors")) as (procs, client, pool):
        first = await created(client, "answered-before-the-loss", "7.00")
        stored = await _orders_of(pool, client.merchant_id)
        redis_server.stop()
        await redis_server.start()
        again = await created(client, "answered-before-the-loss", "7.00", attempts=80)
        assert (again["order_id"], again["session_key"]) == (first["order_id"], first["session_key"])
        assert await _orders_of(pool, client.merchant_id) == stored  # nothing new was made


@pytest.mark.parametrize("redis_server", [("--appendonly", "yes", "--appendfsync", "always")], indirect=True)
async def test_redis_restarted_with_aof_loses_nothing_acknowledged(redis_server):
    async with deployment(redis_server.url, ("web", "actors")) as (procs, client, pool):
        before = await _traffic(client, "kept", 50)
        events = f"{procs.env['REDIS_PREFIX']}events"
        redis = aioredis.Redis.from_url(redis_server.url)
        events_before = await redis.xlen(events)
        await redis.aclose()
        traffic = asyncio.create_task(_traffic(client, "during", 100))
        await asyncio.sleep(0.5)
        redis_server.stop()
        await redis_server.start()
        during = await traffic
        redis = aioredis.Redis.from_url(redis_server.url)
        try:
            assert await redis.xlen(events) >= events_before  # the published events are all there
        finally:
            await redis.aclose()
        stored = set(await _orders_of(pool, client.merchant_id))
        assert {s["order_id"] for s in before + during} <= stored
        assert len(stored) == 150 + 1
