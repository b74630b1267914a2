"""A command the core raises on is retried a bounded number of times, then set aside in the dead-letter
stream with its error; every other command, on its partition and on the others, is still applied. A lane
that dies is started again, so its partitions are served again within the lease TTL."""

from __future__ import annotations

import asyncio
import secrets

import pytest
import redis.asyncio as aioredis

from actors import messages as m
from actors.bus import CommandBus
from actors.worker import Worker
from streams.names import ACTORS_GROUP, Keys
from tests.support.commands import create_order, make_core_raise
from tests.support.metrics import here, value

MAX_DELIVERIES = 3


def _create_order() -> m.Envelope:
    return create_order("mer_poison")


@pytest.fixture
async def worker(settings, pool):
    keys = Keys(f"{settings.redis_prefix}poison-{secrets.token_hex(3)}:", 4)
    redis = aioredis.Redis.from_url(settings.redis_url)
    bus = CommandBus(redis, keys, "test-poison", timeout_s=10)
    worker = Worker(pool, redis, keys, "test-poison", lease_ttl_ms=1500, lanes=2, max_deliveries=MAX_DELIVERIES)
    stop = asyncio.Event()
    await bus.start()
    running = asyncio.create_task(worker.run(stop))
    yield worker, bus, keys, redis
    await bus.stop()
    stop.set()
    await running
    await redis.aclose()


async def test_a_command_the_core_raises_on_is_set_aside_and_the_rest_are_applied(worker, monkeypatch):
    worker, bus, keys, redis = worker
    counted = {o: value(here(), "actor_commands_total", outcome=o) for o in ("ok", "retried", "dead_lettered")}
    poison = _create_order()
    make_core_raise(monkeypatch, poison.command.order_id, "a bug met one record")
    poisoned = asyncio.create_task(bus.ask(poison))
    await asyncio.sleep(0.05)  # on its partition first: the others queue up behind it
    others = [_create_order() for _ in range(100)]
    same_partition = [e for e in others if keys.partition_of(e.command.order_id) == keys.partition_of(poison.command.order_id)]
    assert same_partition and len(same_partition) < 100  # on its partition and on others

    replies = await asyncio.gather(*[bus.ask(e) for e in others])
    assert all(r.ok for r in replies), [r.error for r in replies if not r.ok]
    reply = await poisoned
    assert not reply.ok and (reply.error.status, reply.error.code) == (500, "internal_error")

    [(_id, dead)] = await redis.xrange(keys.dead_letters)
    assert dead[b"command_id"] == poison.command_id.encode()
    assert dead[b"deliveries"] == str(MAX_DELIVERIES).encode()
    assert b"RuntimeError: a bug met one record" in dead[b"error"]
    assert {o: value(here(), "actor_commands_total", outcome=o) - n for o, n in counted.items()} == {
        "ok": 100, "retried": MAX_DELIVERIES - 1, "dead_lettered": 1}
    assert b"raising" in dead[b"trace"]  # the frame that raised
    assert dead[b"stream"] == keys.commands(keys.partition_of(poison.command.order_id)).encode()
    for p in range(keys.partitions):  # nothing left pending: no lane stuck
        assert (await redis.xpending(keys.commands(p), ACTORS_GROUP))["pending"] == 0


async def test_an_undecodable_entry_is_set_aside(worker):
    worker, bus, keys, redis = worker
    await bus.ask(_create_order())  # the groups exist
    await redis.xadd(keys.commands(0), {"m": b"{not json"})
    for _ in range(50):
        if await redis.xlen(keys.dead_letters):
            break
        await asyncio.sleep(0.1)
    [(_id, dead)] = await redis.xrange(keys.dead_letters)
    assert dead[b"m"] == b"{not json" and b"undecodable" in dead[b"error"]
    assert (await bus.ask(_create_order())).ok


async def test_a_lane_that_dies_is_started_again_and_serves_its_partitions(worker):
    worker, bus, keys, redis = worker
    assert (await bus.ask(_create_order())).ok
    [lane_task] = [task for task, lane in worker.tasks.items() if lane is not None and lane.number == 0]
    lane_task.cancel()
    served_by_lane_0 = [e for e in (_create_order() for _ in range(40)) if keys.partition_of(e.command.order_id) % 2 == 0]
    replies = await asyncio.wait_for(asyncio.gather(*[bus.ask(e) for e in served_by_lane_0]), 1.5)  # the lease TTL
    assert all(r.ok for r in replies)
    assert lane_task not in worker.tasks and len(worker.tasks) == 3  # the lease keeper and two lanes
