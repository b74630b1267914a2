"""Stream plumbing on fakeredis (fast) and on the real Redis server: the same tests on both."""

from __future__ import annotations

import asyncio
import secrets

import fakeredis
import msgspec
import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from actors.bus import CommandBus
from actors.messages import CancelOrder, Envelope, Reply
from common.clock import utcnow
from streams.leases import Leases, unheld
from streams.names import Keys
from streams.pipeliner import Pipeliner
from streams.producer import ReplyTimeout
from tests.conftest import REDIS_URL
from tests.support.waiting import until


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


@pytest.fixture
async def real_redis():
    # The bus and the pipeliner speak RESP on the connection's socket, which fakeredis does not have;
    # the bus also blocks on XREAD with COUNT, which fakeredis answers at once instead of waiting.
    client = aioredis.Redis.from_url(REDIS_URL)
    yield client
    await client.aclose()


def test_partition_is_stable_and_in_range():
    k = Keys("x:", 16)
    assert k.partition_of("ord_abc") == k.partition_of("ord_abc") == Keys("y:", 16).partition_of("ord_abc")
    assert {k.partition_of(f"ord_{i}") for i in range(500)} == set(range(16))
    assert k.commands(7) == "x:cmd:{7}" and k.lease(7) == "x:lease:{7}"


def test_a_partition_is_chosen_by_the_ids_random_or_derived_part_not_its_time():
    k = Keys("x:", 16)
    derived = "58f00384aacf0b199081b83b"
    made = {k.partition_of(f"ord_{time_part}{derived}") for time_part in ("01a2134ad17b", "01a2134ad17c", "")}
    assert made == {k.partition_of(f"ord_{derived}")}
    assert len({k.partition_of(f"ord_01a2134ad17b{n:024x}") for n in range(100)}) == 16


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
    await until(lambda: _all_expired(redis, keys), "the dead worker's leases expire", timeout=5)
    gained, _ = await alive.refresh()
    assert gained == set(range(6))


async def _all_expired(redis, keys) -> bool:
    return len(await unheld(redis, keys)) == keys.partitions


async def test_release_all_frees_partitions(redis, keys):
    first, second = Leases(redis, keys, "w1", 5000), Leases(redis, keys, "w2", 5000)
    await first.refresh()
    await first.release_all()
    assert (await second.refresh())[0] == set(range(6))


async def test_every_new_holder_of_a_partition_takes_a_newer_epoch(redis, keys):
    first, second = Leases(redis, keys, "w1", 5000), Leases(redis, keys, "w2", 5000)
    await first.refresh()
    assert first.epochs == dict.fromkeys(range(6), 1)
    await second.refresh()
    _, given_up = await first.refresh()
    await second.refresh()
    assert second.epochs == dict.fromkeys(given_up, 2) and first.epochs == dict.fromkeys(first.owned, 1)


async def test_a_lapsed_worker_holds_nothing_until_it_acquires_anew_under_newer_epochs(redis, keys):
    leases = Leases(redis, keys, "w1", 300)
    await leases.refresh()
    leases.lapse()
    assert leases.owned == set() and leases.epochs == {}
    assert (await leases.refresh())[0] == set()  # its own leases, still in Redis, are not taken back
    await until(lambda: _all_expired(redis, keys), "the lapsed leases expire in Redis", timeout=5)
    gained, _ = await leases.refresh()
    assert gained == set(range(6)) and leases.epochs == dict.fromkeys(range(6), 2)


async def test_a_lease_given_up_goes_next_under_an_epoch_above_the_floor(redis, keys):
    first, second = Leases(redis, keys, "w1", 5000), Leases(redis, keys, "w2", 5000)
    await first.refresh()
    await first.give_up({0: 10})  # PostgreSQL knew of epoch 10, which Redis lost
    assert 0 not in first.owned and 0 not in first.epochs
    gained, _ = await second.refresh()
    assert gained == {0} and second.epochs == {0: 11}


async def test_pipeliner_answers_each_caller(real_redis, keys):
    pipe = Pipeliner(real_redis)
    try:
        results = await asyncio.gather(*[pipe.call("INCR", keys.prefix + "n") for _ in range(50)])
        assert sorted(results) == list(range(1, 51))
        await pipe.call("SET", keys.prefix + "s", "text")
        with pytest.raises(aioredis.ResponseError):
            await pipe.call("INCR", keys.prefix + "s")  # one caller's error is its own
        assert await pipe.call("INCR", keys.prefix + "n") == 51
    finally:
        await pipe.stop()


def _envelope(n: int) -> Envelope:
    cmd = CancelOrder(order_id=f"ord_{n}", merchant_id="mer_1", livemode=False, at=utcnow())
    return Envelope(command_id=f"cmd_{n}", command=cmd)


async def _sent(redis, keys, order_ids: list[str]) -> bool:
    """Each ask's command is on its partition's stream (its waiter was registered before it went)."""
    streams = {keys.commands(keys.partition_of(order_id)) for order_id in order_ids}
    return sum([await redis.xlen(stream) for stream in streams]) == len(order_ids)


async def test_bus_hands_each_waiter_its_reply_from_one_batch_entry(real_redis, keys):
    bus = CommandBus(real_redis, keys, "web-test", timeout_s=5)
    await bus.start()
    try:
        asks = [asyncio.create_task(bus.ask(_envelope(n))) for n in range(3)]
        await until(lambda: _sent(real_redis, keys, [f"ord_{n}" for n in range(3)]), "the three commands sent")
        replies = [Reply(command_id=f"cmd_{n}", ok=n != 1) for n in (2, 0, 1)]
        await real_redis.xadd(bus.reply_stream, {"r": msgspec.json.encode(replies)})
        answers = await asyncio.gather(*asks)
        assert [(a.command_id, a.ok) for a in answers] == [("cmd_0", True), ("cmd_1", False), ("cmd_2", True)]
    finally:
        await bus.stop()


async def test_a_reply_answers_the_requests_of_the_hash_it_names_on_one_command_id(real_redis, keys):
    """One Idempotency-Key sent with two bodies at once: one command id, two request hashes. The first body's reply
    must not answer the second request, which waits for its own (the command's record refusing it)."""
    bus = CommandBus(real_redis, keys, "web-test", timeout_s=5)
    await bus.start()
    try:
        first, again, other = (msgspec.structs.replace(_envelope(7), request_hash=h) for h in ("a" * 64, "a" * 64,
                                                                                                "b" * 64))
        asks = [asyncio.create_task(bus.ask(env)) for env in (first, again, other)]
        await until(lambda: _sent(real_redis, keys, ["ord_7"] * 3), "the three commands sent")
        await real_redis.xadd(bus.reply_stream, {"r": msgspec.json.encode([Reply(command_id="cmd_7", ok=True)]),
                                                 "h": "a" * 16})
        # The reply's entry is handed out whole: once the first body's two requests are answered, so would the
        # second body's be, were it answered by the same reply.
        await asyncio.wait(asks[:2], timeout=5)
        assert [a.done() for a in asks] == [True, True, False]
        await real_redis.xadd(bus.reply_stream, {"r": msgspec.json.encode([Reply(command_id="cmd_7", ok=False)]),
                                                 "h": "b" * 16})
        assert [(await a).ok for a in asks] == [True, True, False]
    finally:
        await bus.stop()


async def test_bus_times_out_when_no_actor_answers(real_redis, keys):
    bus = CommandBus(real_redis, keys, "web-test", timeout_s=0.3)
    await bus.start()
    try:
        with pytest.raises(ReplyTimeout):
            await bus.ask(_envelope(9))
        assert bus._waiting == {}
        # The command itself was sent: a worker that comes back later still applies it.
        assert await real_redis.xlen(keys.commands(keys.partition_of("ord_9"))) == 1
    finally:
        await bus.stop()


async def test_pipeliner_callers_learn_that_redis_is_unreachable():
    unreachable = aioredis.Redis(host="127.0.0.1", port=1)
    pipe = Pipeliner(unreachable)
    try:
        with pytest.raises(RedisError):
            await asyncio.wait_for(pipe.call("PING"), 5)
    finally:
        await pipe.stop()
        await unreachable.aclose()


async def test_pipeliner_reconnects_after_its_connections_are_dropped(real_redis, keys):
    name = f"pipeliner-{keys.prefix.rstrip(':')}"
    named = aioredis.Redis.from_url(REDIS_URL, client_name=name)  # every connection it opens carries the name
    pipe = Pipeliner(named)
    try:
        await asyncio.gather(*[pipe.call("INCR", keys.prefix + "before") for _ in range(20)])
        killed = {int(c["id"]) for c in await real_redis.client_list() if c["name"] == name}
        assert killed
        for client_id in killed:
            await real_redis.client_kill_filter(_id=client_id)
        for _ in range(50):  # the calls in flight when it broke fail; a later one goes through again
            try:
                assert await asyncio.wait_for(pipe.call("INCR", keys.prefix + "after"), 2) >= 1
                break
            except (RedisError, ConnectionError):
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the pipeliner never reconnected")
        assert await pipe.call("CLIENT", "ID") not in killed  # a new connection, not a killed one
    finally:
        await pipe.stop()
        await named.aclose()
