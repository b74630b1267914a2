"""A worker's lanes read only the partitions that are ready for them, and make ready again what Redis lost."""

from __future__ import annotations

import asyncio
import secrets

import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from actors import messages as m
from actors.bus import CommandBus
from actors.worker import Worker
from streams.names import Keys
from streams.producer import ReplyTimeout
from tests.support.commands import create_order


def _create_order() -> m.Envelope:
    return create_order("mer_worker_start")


@pytest.fixture
async def started(settings, pool):
    """A worker of two lanes on a prefix of its own, its Redis client, and a bus to send it commands."""
    keys = Keys(f"{settings.redis_prefix}start-{secrets.token_hex(3)}:", 4)
    # Named, so that a test can drop exactly these connections: every connection a client opens carries it.
    worker_redis = aioredis.Redis.from_url(settings.redis_url, client_name=f"{keys.prefix}worker")
    bus_redis = aioredis.Redis.from_url(settings.redis_url, client_name=f"{keys.prefix}bus")
    bus = CommandBus(bus_redis, keys, "test-worker-start", timeout_s=5)
    worker = Worker(pool, worker_redis, keys, "test-worker-start", lease_ttl_ms=1500, lanes=2)
    stop = asyncio.Event()
    await bus.start()
    running: list[asyncio.Task] = []

    def run() -> asyncio.Task:
        running.append(asyncio.create_task(worker.run(stop)))
        return running[-1]

    yield worker_redis, bus, keys, run
    await bus.stop()
    stop.set()
    await asyncio.gather(*running)
    await bus_redis.aclose()
    await worker_redis.aclose()


async def test_lanes_wait_for_consumer_groups_made_slowly(started):
    worker_redis, bus, _keys, run = started
    make_group = worker_redis.xgroup_create

    async def slow_group(*args, **kwargs):
        await asyncio.sleep(0.2)  # the partition is leased already; a lane reading it now would find no group
        return await make_group(*args, **kwargs)

    worker_redis.xgroup_create = slow_group
    running = run()
    reply = await bus.ask(_create_order())
    assert reply.ok, reply.error
    assert not running.done()


async def test_streams_lost_by_redis_are_made_again(started):
    worker_redis, bus, keys, run = started
    running = run()
    first = _create_order()
    assert (await bus.ask(first)).ok
    await worker_redis.delete(*(keys.commands(p) for p in range(keys.partitions)))  # as a restart without data would
    second = _create_order()
    reply = await bus.ask(second)
    assert reply.ok, reply.error
    assert not running.done()


async def test_connections_dropped_by_redis_are_opened_again(started, redis):
    worker_redis, bus, keys, run = started
    running = run()
    assert (await bus.ask(_create_order())).ok
    ours = [c for c in await redis.client_list() if c["name"] in (f"{keys.prefix}worker", f"{keys.prefix}bus")]
    assert len(ours) >= 4  # the lanes' readers, the worker's and the bus's pipeliners, the bus's reply reader
    for client in ours:
        await redis.client_kill_filter(_id=client["id"])
    for _ in range(40):  # a command in flight when its connection dropped fails; a retry goes through
        try:
            reply = await bus.ask(_create_order())
            break
        except (RedisError, ConnectionError, ReplyTimeout):
            await asyncio.sleep(0.1)
    else:
        raise AssertionError("no command was answered after the connections dropped")
    assert reply.ok, reply.error
    assert not running.done()
