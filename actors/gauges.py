"""What the actors process reports every few seconds: each partition's lag, pending entries and lease, the
outbox backlog and the dead letters; and whether a worker is ready by its leases."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncpg

from actors import store
from common import metrics
from streams import inspect, leases
from streams.connection import Client
from streams.names import ACTORS_GROUP, Keys

log = logging.getLogger(__name__)
REFRESH_EVERY_S = 10.0  # a few Redis calls per partition and one count of a small table: cheap at this pace


async def refresh(pool: asyncpg.Pool, redis: Client, keys: Keys, lease_ttl_ms: int) -> None:
    for p in range(keys.partitions):
        found = await inspect.partition(redis, keys, p, lease_ttl_ms)
        group = next((g for g in found.stream.groups if g.name == ACTORS_GROUP), None)
        label = str(p)
        # A partition whose group is not made yet has had no reader: every entry on it waits.
        lag = found.stream.length if group is None else group.lag
        if lag is not None:  # Redis < 7 does not count it
            metrics.PARTITION_LAG.labels(label).set(lag)
        metrics.PARTITION_PENDING.labels(label).set(group.pending if group else 0)
        metrics.PARTITION_LEASED.labels(label).set(1 if found.lease_holder else 0)
    dead = await inspect.dead_letters(redis, keys)
    for labels in metrics.DEAD_LETTERS.collect()[0].samples:  # a stream whose dead letters were all dropped: 0
        dead.setdefault(labels.labels["stream"], 0)
    for stream, count in dead.items():
        metrics.DEAD_LETTERS.labels(stream).set(count)
    async with pool.acquire() as conn:
        rows, oldest_s = await store.outbox_backlog(conn)
    metrics.OUTBOX_BACKLOG.set(rows)
    metrics.OUTBOX_OLDEST.set(oldest_s)


async def keep_refreshed(pool: asyncpg.Pool, redis: Client, keys: Keys, lease_ttl_ms: int, stop: asyncio.Event,
                         every_s: float = REFRESH_EVERY_S) -> None:
    while not stop.is_set():
        try:
            await refresh(pool, redis, keys, lease_ttl_ms)
        except Exception as exc:  # noqa: BLE001 - Redis or PostgreSQL away: the figures wait, readyz says why
            log.warning("actors: gauges not refreshed (%s)", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)


async def leases_check(redis: Client, keys: Keys, owned: set[int]) -> str:
    """A worker is ready while it holds a partition, or while every partition is held (by others: this one
    stands by, as a spare would). A worker holding none while some partition has no holder is not serving."""
    if owned:
        return "ok"
    unheld = await leases.unheld(redis, keys)
    return "ok" if not unheld else f"no lease held here, and partitions {unheld[:8]} have no holder"
