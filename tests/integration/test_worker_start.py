"""A worker's lanes start reading only the partitions that are ready for them."""

from __future__ import annotations

import asyncio
import secrets
from datetime import timedelta

import redis.asyncio as aioredis

from actors import messages as m
from actors.runtime import Worker
from service.clock import utcnow
from streams.names import Keys
from streams.producer import CommandBus


async def test_lanes_wait_for_consumer_groups_made_slowly(settings, pool):
    keys = Keys(f"{settings.redis_prefix}start-{secrets.token_hex(3)}:", 4)
    worker_redis = aioredis.Redis.from_url(settings.redis_url)
    make_group = worker_redis.xgroup_create

    async def slow_group(*args, **kwargs):
        await asyncio.sleep(0.2)  # the partition is leased already; a lane reading it now would find no group
        return await make_group(*args, **kwargs)

    worker_redis.xgroup_create = slow_group
    worker = Worker(pool, worker_redis, keys, "test-slow-start", lease_ttl_ms=3000, lanes=2)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    bus_redis = aioredis.Redis.from_url(settings.redis_url)
    bus = CommandBus(bus_redis, keys, "test-slow-start", timeout_s=5)
    await bus.start()
    try:
        now = utcnow()
        create = m.CreateOrder(order_id=f"ord_{secrets.token_hex(12)}", merchant_id="mer_slow_start", livemode=False,
                               at=now, amount=1_000_000,
                               session=m.NewSession(session_id=f"cs_{secrets.token_hex(12)}",
                                                    session_key=f"cs_test_{secrets.token_hex(24)}",
                                                    expires_at=now + timedelta(minutes=5)))
        reply = await bus.ask(m.Envelope(command_id=f"cmd_{secrets.token_hex(12)}", command=create))
        assert reply.ok, reply.error
        assert not running.done()
    finally:
        await bus.stop()
        stop.set()
        await running
        await bus_redis.aclose()
        await worker_redis.aclose()
