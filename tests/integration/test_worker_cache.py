"""A batch decides on the orders it held when it started, whatever happens to the worker's cache meanwhile:
a lease change (or another lane's batch filling the cache) while the batch waits on PostgreSQL used to leave an
order neither cached nor read, and its command was answered order_not_found."""

from __future__ import annotations

import asyncio
import secrets

import msgspec
import pytest
import redis.asyncio as aioredis

from actors import messages as m
from actors import store
from actors.bus import CommandBus
from actors.worker import Worker
from common.clock import utcnow
from streams.names import Keys
from tests.support.commands import create_order


@pytest.fixture
async def worker(settings, pool):
    keys = Keys(f"{settings.redis_prefix}cache-{secrets.token_hex(3)}:", 2)
    redis = aioredis.Redis.from_url(settings.redis_url)
    bus = CommandBus(redis, keys, "test-cache", timeout_s=10)
    worker = Worker(pool, redis, keys, "test-cache", lease_ttl_ms=1500, lanes=1)
    stop = asyncio.Event()
    await bus.start()
    running = asyncio.create_task(worker.run(stop))
    yield worker, bus
    await bus.stop()
    stop.set()
    await running
    await redis.aclose()


async def test_a_cached_order_dropped_while_its_batch_reads_the_database_is_still_decided(worker, monkeypatch):
    worker, bus = worker
    created = create_order("mer_cache")
    assert (await bus.ask(created)).ok
    order_id = created.command.order_id
    prepare = store.prepare

    async def cache_dropped_meanwhile(conn, wanted):
        found = await prepare(conn, wanted)
        worker.applier.cache.clear()  # what the lease keeper does when the worker's partitions change
        return found

    monkeypatch.setattr(store, "prepare", cache_dropped_meanwhile)
    cancel = m.CancelOrder(order_id=order_id, merchant_id="mer_cache", livemode=False, at=utcnow())
    reply = await bus.ask(m.Envelope(command_id=f"cmd_{secrets.token_hex(12)}", command=cancel))
    assert reply.ok, reply.error
    assert msgspec.json.decode(reply.state)["status"] == "CANCELED"
