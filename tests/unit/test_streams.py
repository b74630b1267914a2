"""Stream plumbing on fakeredis (fast) and on the real Redis server: the same tests on both."""

from __future__ import annotations

import asyncio
import secrets

import fakeredis
import pytest
import redis.asyncio as aioredis

from actors.leases import Leases
from streams.names import Keys
from streams.pipeliner import Pipeliner
from tests.conftest import REDIS_URL


@pytest.fixture(params=["fakeredis", "redis"])
async def redis(request):
    if request.param == "fakeredis":
        client = fakeredis.FakeAsyncRedis()
    else:
        client = aioredis.Redis.from_url(REDIS_URL)
    yield client
    await client.aclose()


@pytest.fixture
def keys():
    return Keys(f"u{secrets.token_hex(4)}:", 6)


def test_partition_is_stable_and_in_range():
    k = Keys("x:", 16)
    assert k.partition_of("ord_abc") == k.partition_of("ord_abc") == Keys("y:", 16).partition_of("ord_abc")
    assert {k.partition_of(f"ord_{i}") for i in range(500)} == set(range(16))
    assert k.commands(7) == "x:cmd:{7}" and k.lease(7) == "x:lease:{7}"


async def test_one_worker_takes_every_partition(redis, keys):
    leases = Leases(redis, keys, "w1", 1000)
    gained, lost = await leases.refresh()
    assert gained == set(range(6)) and lost == set()


async def test_a_second_worker_gets_a_fair_share(redis, keys):
    first, second = Leases(redis, keys, "w1", 5000), Leases(redis, keys, "w2", 5000)
    await first.refresh()
    await second.refresh()  # announces itself; everything is still held
    _, given_up = await first.refresh()
    gained, _ = await second.refresh()
    assert len(given_up) == 3 and gained == given_up
    assert first.owned.isdisjoint(second.owned) and first.owned | second.owned == set(range(6))


async def test_a_dead_workers_partitions_are_taken_over(redis, keys):
    dead, alive = Leases(redis, keys, "dead", 300), Leases(redis, keys, "alive", 300)
    await dead.refresh()
    assert (await alive.refresh())[0] == set()
    await asyncio.sleep(0.4)  # the dead worker stops renewing
    gained, _ = await alive.refresh()
    assert gained == set(range(6))


async def test_release_all_frees_partitions(redis, keys):
    first, second = Leases(redis, keys, "w1", 5000), Leases(redis, keys, "w2", 5000)
    await first.refresh()
    await first.release_all()
    assert (await second.refresh())[0] == set(range(6))


async def test_pipeliner_answers_each_caller(redis, keys):
    pipe = Pipeliner(redis)
    pipe.start()
    try:
        results = await asyncio.gather(*[pipe.call("INCR", keys.prefix + "n") for _ in range(50)])
        assert sorted(results) == list(range(1, 51))
        await pipe.call("SET", keys.prefix + "s", "text")
        with pytest.raises(aioredis.ResponseError):
            await pipe.call("INCR", keys.prefix + "s")  # one caller's error is its own
        assert await pipe.call("INCR", keys.prefix + "n") == 51
    finally:
        await pipe.stop()
