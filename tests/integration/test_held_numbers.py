"""A worker holds order numbers for a merchant creating orders fast, and decides a batch whose orders it holds or
creates with nothing read first: numbers stay unique and without gaps, a retry of a recorded command still gets
its recorded answer and changes nothing, and a creation naming an order that exists is still refused."""

from __future__ import annotations

import asyncio
import secrets

import msgspec
import pytest
import redis.asyncio as aioredis
from prometheus_client import REGISTRY

from actors import messages as m
from actors.bus import CommandBus
from actors.numbers import NumberBlocks
from actors.worker import Worker
from common.clock import utcnow
from streams.names import Keys
from tests.support.commands import create_order


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Stand:
    def __init__(self, worker: Worker, bus: CommandBus, clock: Clock, merchant_id: str):
        self.worker, self.bus, self.clock, self.merchant_id = worker, bus, clock, merchant_id

    async def holding(self) -> list[int]:
        """New orders until the worker holds a number for the next one (the first that finds none reads first and
        takes a block), so that the next batch of one creation is decided at once."""
        numbers = []
        while not self.worker.applier.numbers.held((self.merchant_id, False)):
            reply = await self.bus.ask(create_order(self.merchant_id))
            numbers.append(msgspec.json.decode(reply.state)["order_number"])
        return numbers

    async def busy(self, count: int) -> list[int]:
        """`count` new orders at once, then the clock a second on: the worker sees the merchant at that rate."""
        replies = await asyncio.gather(*(self.bus.ask(create_order(self.merchant_id)) for _ in range(count)))
        assert all(r.ok for r in replies), [r.error for r in replies if not r.ok]
        self.clock.now += 1
        return [msgspec.json.decode(r.state)["order_number"] for r in replies]


@pytest.fixture
async def stand(settings, pool):
    keys = Keys(f"{settings.redis_prefix}held-{secrets.token_hex(3)}:", 2)
    redis = aioredis.Redis.from_url(settings.redis_url)
    bus = CommandBus(redis, keys, "test-held", timeout_s=10)
    clock = Clock()
    worker = Worker(pool, redis, keys, "test-held", lease_ttl_ms=1500, lanes=2,
                    numbers=NumberBlocks(min_rate=5, clock=clock))
    stop = asyncio.Event()
    await bus.start()
    running = asyncio.create_task(worker.run(stop))
    yield Stand(worker, bus, clock, f"mer_held_{secrets.token_hex(4)}")
    await bus.stop()
    stop.set()
    await running
    await redis.aclose()


def batches(how: str) -> float:
    return REGISTRY.get_sample_value("actor_batches_total", {"how": how}) or 0.0


async def test_a_busy_merchant_gets_unique_numbers_without_gaps_with_batches_decided_at_once(stand, pool):
    at_once = batches("at_once")
    numbers = await stand.busy(10)  # no numbers held yet: read first, and the rate counted
    for _ in range(4):
        numbers += await stand.busy(10)
    assert sorted(numbers) == list(range(1001, 1051))
    assert batches("at_once") > at_once
    stored = await pool.fetch("SELECT order_number FROM orders WHERE merchant_id = $1", stand.merchant_id)
    assert sorted(r["order_number"] for r in stored) == list(range(1001, 1051))
    # What the worker holds is committed as handed out: a worker started now numbers after it.
    last = await pool.fetchval("SELECT last FROM order_numbers WHERE merchant_id = $1", stand.merchant_id)
    assert last >= 1050 + stand.worker.applier.numbers.held((stand.merchant_id, False)) - 1


async def test_a_retry_of_a_recorded_creation_gets_its_answer_and_leaves_no_gap(stand, pool):
    numbers = await stand.busy(10) + await stand.busy(10)
    first = create_order(stand.merchant_id)
    answered = await stand.bus.ask(first)
    numbers.append(msgspec.json.decode(answered.state)["order_number"])
    numbers += await stand.holding()
    stand.worker.applier.cache.clear()  # as after a restart or a lease moving: the worker no longer knows the order
    again = batches("decided_again")
    retried = await stand.bus.ask(first)
    assert batches("decided_again") > again
    assert retried.ok and retried.state == answered.state
    numbers += await stand.busy(5)
    assert sorted(numbers) == list(range(1001, 1001 + len(numbers)))
    count = await pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1", stand.merchant_id)
    assert count == len(numbers)


async def test_a_creation_naming_an_order_that_exists_is_refused_and_the_order_kept(stand, pool):
    numbers = await stand.busy(10) + await stand.busy(10)
    existing = create_order(stand.merchant_id)
    numbers.append(msgspec.json.decode((await stand.bus.ask(existing)).state)["order_number"])
    numbers += await stand.holding()
    stand.worker.applier.cache.clear()
    before = await pool.fetchrow("SELECT state, version FROM orders WHERE order_id = $1", existing.command.order_id)
    again = batches("decided_again")
    clash = create_order(stand.merchant_id, order_id=existing.command.order_id)  # a command id of its own
    reply = await stand.bus.ask(clash)
    assert batches("decided_again") > again
    assert not reply.ok and (reply.error.status, reply.error.code) == (409, "order_exists")
    after = await pool.fetchrow("SELECT state, version FROM orders WHERE order_id = $1", existing.command.order_id)
    assert after == before
    # The refused creation's number went to the next order.
    follower = await stand.bus.ask(create_order(stand.merchant_id))
    assert msgspec.json.decode(follower.state)["order_number"] == max(numbers) + 1


async def test_a_command_on_a_held_order_reads_nothing_and_its_retry_gets_the_recorded_answer(stand):
    created = create_order(stand.merchant_id)
    assert (await stand.bus.ask(created)).ok  # the worker holds the order as it committed it
    cancel = m.Envelope(command_id=f"cmd_{secrets.token_hex(12)}",
                        command=m.CancelOrder(order_id=created.command.order_id, merchant_id=stand.merchant_id,
                                              livemode=False, at=utcnow()))
    at_once = batches("at_once")
    first = await stand.bus.ask(cancel)
    assert first.ok and msgspec.json.decode(first.state)["status"] == "CANCELED"
    assert batches("at_once") > at_once
    # Decided again on the held order, the retry would be refused (already canceled): the recorded row refuses the
    # commit, and the batch is decided again with the recorded answer.
    again = batches("decided_again")
    retried = await stand.bus.ask(cancel)
    assert batches("decided_again") > again
    assert retried.ok and retried.state == first.state
