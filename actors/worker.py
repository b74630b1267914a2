"""The actor worker: owns partitions by lease, shares them out among its lanes, and keeps both going.

The worker's partitions are shared out among a few lanes (actors/lane.py), each with its own PostgreSQL
connection, so that lanes decide their batches while a commit is in flight. Per batch a lane reads from its
partitions, answers already-recorded commands from the dedupe table, runs the rest through their order's pure
transitions, commits everything in one transaction (with the batches other lanes have ready: actors/group_commit.py),
then replies, acks and publishes. A batch
whose orders the worker holds, or creates under numbers it holds, reads nothing first: the dedupe table's
unique key refuses its commit if one of its commands was recorded before, and it is decided again the long
way (actors/applier.py). A crash anywhere before the ack leaves the commands pending; the next owner re-reads
them and the dedupe rows make the replay harmless.

Single writer: each lease carries an epoch, claimed in PostgreSQL before the partition is served, and every batch
commits only under the newest epoch of its partitions (actors/fencing.py). A worker that cannot renew its leases
within their TTL lapses at once: it serves nothing, cancels its reads in flight, and acts again only on leases it
acquires anew (actors/tenure.py).
"""

from __future__ import annotations

import asyncio
import logging
import time

import asyncpg

from actors import fencing
from actors.applier import Applier, BatchHooks
from actors.lane import Crew, Lane
from actors.numbers import NumberBlocks
from actors.outbox import OutboxSweep
from actors.tenure import Tenure
from common import faults, metrics
from common.clock_offset import ClockOffset
from streams import retention
from streams.connection import Client
from streams.consumer import Consumer
from streams.leases import Leases
from streams.names import ACTORS_GROUP, Keys
from streams.pipeliner import Pipeliner

log = logging.getLogger(__name__)
TRIM_EVERY_S = 30.0
RESTART_DELAY_S = 0.5  # before a lane or the lease keeper that died starts again


class Worker:
    def __init__(self, pool: asyncpg.Pool, redis: Client, keys: Keys, worker_id: str,
                 lease_ttl_ms: int = 5000, batch_size: int = 500, lanes: int = 2, *,
                 max_deliveries: int = 5, retention_s: int = 86_400, max_skew_s: float = 300,
                 hooks: BatchHooks | None = None, numbers: NumberBlocks | None = None,
                 clock: ClockOffset | None = None):
        self.redis = redis
        self.keys = keys
        self.worker_id = worker_id
        self.retention_s = retention_s
        pipeliner = Pipeliner(redis)
        self.applier = Applier(keys.prefix, hooks, numbers)  # the orders and order numbers the lanes share
        # The clock is checked before every lease refresh: a worker whose clock is off holds no partition
        # (common/clock_offset.py).
        self.crew = Crew(pool, redis, keys, worker_id, Consumer(redis, ACTORS_GROUP, worker_id), pipeliner,
                         self.applier, clock, lanes, batch_size, max_deliveries, max_skew_s, Tenure(worker_id),
                         idle_ms=lease_ttl_ms)
        self.lanes = [Lane(n, self.crew) for n in range(lanes)]
        self.outbox = OutboxSweep(pool, pipeliner, keys, worker_id)
        self.tasks: dict[asyncio.Task, Lane | None] = {}  # the running lanes, and the lease keeper (None)
        self.leases = Leases(redis, keys, worker_id, lease_ttl_ms)
        self._lease_every = lease_ttl_ms / 3000
        self._sweep_every = lease_ttl_ms / 1000

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until stopped. A lane or the lease keeper that ends for any other reason is logged with its
        traceback and started again, so no partition stays leased to this worker without being served."""
        self._start(None, stop)
        for lane in self.lanes:
            self._start(lane, stop)
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                done, _ = await asyncio.wait([stopping, *self.tasks], return_when=asyncio.FIRST_COMPLETED)
                for task in done - {stopping}:
                    if stop.is_set():  # it ended because it was told to
                        break
                    lane = self.tasks.pop(task)
                    what = "the lease keeper" if lane is None else f"lane {lane.number}"
                    exc = asyncio.CancelledError() if task.cancelled() else task.exception()
                    log.error("worker %s: %s stopped; starting it again", self.worker_id, what,
                              exc_info=(type(exc), exc, exc.__traceback__) if exc else None)
                    if lane is not None:
                        await lane.reset()
                    await asyncio.sleep(RESTART_DELAY_S)
                    self._start(lane, stop)
        finally:
            stopping.cancel()
            if self.tasks:
                await asyncio.wait(self.tasks)
            await self.leases.release_all()
            await self.crew.pipeliner.stop()

    def _start(self, lane: Lane | None, stop: asyncio.Event) -> None:
        task = asyncio.create_task(self._keep_leases(stop) if lane is None else lane.serve(stop))
        self.tasks[task] = lane

    async def _keep_leases(self, stop: asyncio.Event) -> None:
        trimmed_at = swept_at = 0.0
        while not stop.is_set():
            try:
                # Nothing here may outlast the leases: a refresh held up by the network ends when they lapse.
                async with asyncio.timeout(self._until_lapse()):
                    if not await self.crew.clock_holds():
                        await self._stand_aside()
                        await asyncio.sleep(self._lease_every)
                        continue
                    await self._refresh_leases()
                    if time.monotonic() - swept_at >= self._sweep_every:
                        swept_at = time.monotonic()
                        self.crew.sweep |= self.crew.tenure.serving
                    if time.monotonic() - trimmed_at >= TRIM_EVERY_S:
                        trimmed_at = time.monotonic()
                        await self._trim()
            except faults.UNAVAILABLE as exc:  # a TimeoutError too: the leases' time ran out
                if self._until_lapse() != 0:  # past it, the lapse says why
                    faults.unavailable(log, f"worker {self.worker_id}: renewing leases", exc, "retrying")
            if self._until_lapse() == 0:
                self._lapse()
            try:
                await asyncio.wait_for(stop.wait(), min(self._lease_every, self._until_lapse() or self._lease_every))
            except TimeoutError:
                pass

    def _until_lapse(self) -> float | None:
        """Seconds until the leases held may have expired in Redis (0 past it), or None when none is held."""
        if not self.leases.owned:
            return None
        return max(0.0, self.leases.valid_until - time.monotonic())

    def _lapse(self) -> None:
        log.warning("worker %s: leases on partitions %s not renewed within their TTL; serving nothing until it "
                    "acquires leases anew", self.worker_id, sorted(self.leases.owned))
        metrics.LEASES_LAPSED.inc()
        self.leases.lapse()
        self.crew.tenure.lapse()

    async def _stand_aside(self) -> None:
        """Serve nothing and hold nothing: the lanes stop reading at once, the leases go to healthy workers, and
        what this worker read but did not finish stays pending for them."""
        self.crew.tenure.serving.clear()
        if self.leases.owned:
            log.warning("worker %s: giving up partitions %s", self.worker_id, sorted(self.leases.owned))
        await self.leases.release_all()

    async def _refresh_leases(self) -> None:
        clock, crew = self.crew.clock, self.crew
        if crew.tenure.fenced:  # PostgreSQL refused a commit of these: their leases go
            fenced, crew.tenure.fenced = crew.tenure.fenced, {}
            await self.leases.give_up(fenced)
        gained, lost = await self.leases.refresh(clock.shared_ms() if clock is not None else None)
        crew.tenure.serving -= lost
        # Lanes run beside this: they see a partition only once its consumer group exists, its epoch is
        # claimed in PostgreSQL, its stale cache entries are gone and its pending entries are marked for
        # reclaiming. A partition not ready now is taken up again by the next refresh.
        ready: dict[int, int] = {}
        try:
            waiting = {p: self.leases.epochs[p] for p in sorted(self.leases.owned - crew.tenure.serving)}
            for p in waiting:
                await crew.consumer.ensure(self.keys.commands(p))
            if waiting:
                ready = await self._claim(waiting)
        finally:
            changed = ready.keys() | lost
            if changed:
                # Another worker may have written these orders meanwhile: forget what we hold of them.
                self.applier.forget(lambda order_id: self.keys.partition_of(order_id) in changed)
                crew.reclaim |= ready.keys()
                crew.tenure.serve(ready)
        if gained or lost:
            log.info("worker %s owns partitions %s", self.worker_id, sorted(self.leases.owned))

    async def _claim(self, epochs: dict[int, int]) -> dict[int, int]:
        """Claim the epochs of newly held leases in PostgreSQL: those it knows a newer epoch of are given up."""
        async with self.crew.pool.acquire() as conn:
            newer = await fencing.claim(conn, self.keys.prefix, epochs, self.worker_id)
        if newer:
            log.warning("worker %s: PostgreSQL knows newer lease epochs of partitions %s; giving them up",
                        self.worker_id, sorted(newer))
            await self.leases.give_up(newer)
        return {p: epoch for p, epoch in epochs.items() if p not in newer}

    async def _trim(self) -> None:
        """Drop what every reader has acknowledged and the retention window no longer keeps: the owned command
        partitions, and the events stream for the owner of partition 0."""
        streams = [self.keys.commands(p) for p in sorted(self.leases.owned)]
        if 0 in self.leases.owned:
            streams.append(self.keys.events)
        for stream in streams:
            try:
                await retention.trim(self.redis, stream, self.retention_s)
            except faults.UNAVAILABLE:
                raise
            except Exception:  # one stream's trouble leaves the others, and the leases, to go on
                log.exception("worker %s: trimming %s failed", self.worker_id, stream)
