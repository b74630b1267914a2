"""The outbox: every committed event reaches the events stream, at least once, even across a crash."""

from __future__ import annotations

import asyncio
import secrets
from datetime import timedelta

import msgspec
import pytest

from actors.worker import Worker
from common.clock import utcnow
from streams.names import Keys
from tests.integration.helpers import quick


async def _stream_event_ids(redis, keys) -> set[str]:
    entries = await redis.xrange(keys.events)
    return {msgspec.json.decode(fields[b"e"])["id"] for _, fields in entries}


async def _outbox_rows(pool, event_ids: set[str]) -> int:
    """Outbox rows of the batches these events were committed in (a batch is named by its first event)."""
    return await pool.fetchval("SELECT count(*) FROM outbox WHERE batch_id = ANY($1)", list(event_ids))


async def test_published_batches_leave_the_outbox(stack, merchant, redis, keys):
    created = [await quick(merchant) for _ in range(3)]
    ids = {r["event_id"] for r in await stack.pool.fetch(
        "SELECT event_id FROM events WHERE order_id = ANY($1)", [c["order_id"] for c in created])}
    assert len(ids) == 6  # order.created and checkout_session.created each
    for _ in range(100):
        if await _outbox_rows(stack.pool, ids) == 0:
            break
        await asyncio.sleep(0.05)
    assert await _outbox_rows(stack.pool, ids) == 0
    assert ids <= await _stream_event_ids(redis, keys)


@pytest.fixture
def own_keys(keys) -> Keys:
    """An events stream of the test's own: the stack's is read by the webhook tests."""
    return Keys(f"{keys.prefix}outbox-{secrets.token_hex(3)}:", keys.partitions)


async def test_sweep_publishes_what_a_crash_left_in_the_outbox(stack, merchant, redis, own_keys):
    keys = own_keys
    created = await quick(merchant)
    left = [r["event_id"] for r in await stack.pool.fetch(
        "SELECT event_id FROM events WHERE order_id = $1 ORDER BY seq", created["order_id"])]
    batch = f"evt_left_behind_{secrets.token_hex(3)}"
    await stack.pool.execute("INSERT INTO outbox (batch_id, event_ids, created_at) VALUES ($1, $2, $3)",
                             batch, left, utcnow() - timedelta(seconds=30))
    sweeper = Worker(stack.pool, redis, keys, "test-sweeper")
    try:
        assert await sweeper.outbox.sweep(min_age_s=5) >= 1  # with whatever else a killed worker left
        assert set(left) <= await _stream_event_ids(redis, keys)
        assert await stack.pool.fetchval("SELECT count(*) FROM outbox WHERE batch_id = $1", batch) == 0
        assert await sweeper.outbox.sweep(min_age_s=5) == 0
    finally:
        await sweeper.crew.pipeliner.stop()


async def test_sweep_leaves_a_batch_still_being_published(stack, redis, own_keys):
    keys = own_keys
    await stack.pool.execute(
        "INSERT INTO outbox (batch_id, event_ids) VALUES ('evt_in_flight', ARRAY['evt_in_flight'])")
    sweeper = Worker(stack.pool, redis, keys, "test-sweeper")
    try:
        assert await sweeper.outbox.sweep(min_age_s=5) == 0
        assert "evt_in_flight" not in await _stream_event_ids(redis, keys)
    finally:
        await stack.pool.execute("DELETE FROM outbox WHERE batch_id = 'evt_in_flight'")
        await sweeper.crew.pipeliner.stop()


async def test_sweep_publishes_the_public_bytes_of_the_events_a_batch_names_in_its_order(stack, merchant, redis,
                                                                                         own_keys):
    keys = own_keys
    created = [await quick(merchant) for _ in range(2)]
    stored = await stack.pool.fetch(
        "SELECT event_id, public FROM events WHERE order_id = ANY($1) ORDER BY order_id DESC, seq",
        [c["order_id"] for c in created])
    named = [r["event_id"] for r in stored]  # not the order they were committed in: the row's order is kept
    batch = f"evt_named_{secrets.token_hex(3)}"
    await stack.pool.execute("INSERT INTO outbox (batch_id, event_ids, created_at) VALUES ($1, $2, $3)",
                             batch, named, utcnow() - timedelta(seconds=30))
    sweeper = Worker(stack.pool, redis, keys, "test-sweeper")
    try:
        assert await sweeper.outbox.sweep(min_age_s=5) >= 1
        published = [bytes(fields[b"e"]) for _, fields in await redis.xrange(keys.events)]
        ours = [p for p in published if msgspec.json.decode(p)["id"] in named]
        assert ours == [bytes(r["public"]) for r in stored]
        assert await stack.pool.fetchval("SELECT count(*) FROM outbox WHERE batch_id = $1", batch) == 0
    finally:
        await sweeper.crew.pipeliner.stop()

