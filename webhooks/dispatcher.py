"""The dispatcher: events stream -> deliveries in PostgreSQL -> one lane of concurrent attempts per endpoint.

Every delivery is written before its stream entry is acknowledged, and leased while in flight, so a
crash anywhere loses nothing: unacknowledged entries are read again (the deliveries table ignores
what it already has), and a delivery whose lease runs out is due again for the sweep. Leases are short and
renewed while held, so what a dead dispatcher held goes out again within seconds.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
from datetime import datetime, timedelta

import asyncpg
import msgspec

from actors.publication import PublicEvent
from common import faults, metrics
from common.clock import Clock, utcnow
from common.secrets import Vault
from streams.connection import Client
from streams.consumer import Entry
from streams.names import WEBHOOKS_GROUP, Keys
from streams.reader import Reader
from webhooks import endpoints, outcomes, schedule, store
from webhooks.events import from_public
from webhooks.sender import Attempt, Job, Sender
from webhooks.settings import WebhookSettings

log = logging.getLogger(__name__)
_decode_public = msgspec.json.Decoder(PublicEvent).decode
# Test hook, as in the actors: die at the named point to prove crash safety (tests only).


class DispatchHooks:
    """Moments of reading the events stream. They do nothing here; the crash tests subclass them to kill the
    process there, as a kill -9 would (tests/support/crashing.py)."""

    def before_ack(self) -> None:
        pass
MAX_QUEUE = 2000  # deliveries queued in memory for one endpoint at most
QUEUE_S = 30.0  # an endpoint's queue holds what its lane sends in this long at its recent pace
# What an attempt left its delivery as (outcomes.record_row's status), as the delivery counter names it.
_COUNTED = {status: metrics.WEBHOOK_DELIVERIES.labels(outcome)
            for status, outcome in (("succeeded", "delivered"), ("pending", "retrying"), ("failed", "failed"))}


class Lane:
    """The queued deliveries of one endpoint and how many of its attempts are in flight."""

    def __init__(self) -> None:
        self.queue: collections.deque[Job] = collections.deque()
        self.active = 0


class Dispatcher:
    def __init__(self, pool: asyncpg.Pool, redis: Client, keys: Keys, vault: Vault,
                 settings: WebhookSettings | None = None, *, clock: Clock = utcnow,
                 jitter: schedule.Jitter = schedule.uniform_jitter, group: str = WEBHOOKS_GROUP, consumer: str = "",
                 hooks: DispatchHooks | None = None):
        settings = settings or WebhookSettings()
        self.pool, self.redis, self.keys, self.vault, self.hooks = pool, redis, keys, vault, hooks or DispatchHooks()
        self.settings, self.clock, self.jitter = settings, clock, jitter
        self.reader = Reader(redis, keys.events, group, self._ingest, batch=settings.batch,
                             reclaim_idle_ms=settings.reclaim_idle_ms, name=consumer, away=faults.READING,
                             report=functools.partial(faults.report, log, "webhooks: reading events", then="retrying"))
        self.sender = Sender(settings.timeout_s, clock)
        self._lanes: dict[str, Lane] = {}
        self._held: set[str] = set()    # deliveries queued or in flight here: never claimed twice
        self._done: list[Attempt] = []  # attempts waiting to be written
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()
        self._writer: asyncio.Task | None = None
        self._writing = asyncio.Lock()  # one outcome transaction at a time: failing_since sees them in order
        self._opened: dict[str, str] = {}
        self._waiting: set[str] = set()  # endpoints with due deliveries left in the table for lack of room
        self._refilling: set[str] = set()
        self._sweeping = asyncio.Lock()
        self._closing = False
        self._latency: dict[str, float] = {}  # seconds per attempt, moving average, per endpoint

    async def start(self, from_id: str = "0") -> None:
        """From the stream's start by default: the endpoints' creation times decide what is theirs."""
        await self.reader.start(from_id)
        await self.sender.start()
        self._writer = asyncio.create_task(self._write_loop())

    async def close(self) -> None:
        """Finish the attempts in flight and record them; queued ones are handed back to the table, due
        now, for the next dispatcher (a shutdown never waits on a slow endpoint's whole queue)."""
        self._closing = True
        queued = [job.delivery_id for lane in self._lanes.values() for job in lane.queue]
        for lane in self._lanes.values():
            lane.queue.clear()
        if queued:
            try:
                async with self.pool.acquire() as conn:
                    await store.due_at(conn, queued, self.clock())
            except Exception as exc:  # noqa: BLE001 - faults.report tells a bug from a dependency away
                faults.report(log, "webhooks: handing back queued deliveries", exc,
                              "their leases run out and a sweep takes them")
        self._held.difference_update(queued)
        await self.drain()
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
        await self.sender.close()

    async def run(self, stop: asyncio.Event) -> None:
        await self.reader.run(stop)

    # Reading the stream

    async def consume(self, block_ms: int = 0) -> int:
        """One read of new stream entries; returns how many deliveries it started."""
        return await self.reader.consume(block_ms)

    async def reclaim(self) -> int:
        """Entries a dead consumer read but never acknowledged (its deliveries may not exist yet)."""
        return await self.reader.reclaim()

    async def _ingest(self, entries: list[Entry]) -> int:
        events: dict[str, store.Published] = {}
        for entry in entries:
            try:
                public = _decode_public(entry.fields[b"e"])
            except (KeyError, msgspec.DecodeError):
                log.error("webhooks: skipping undecodable event entry %s", entry.entry_id)
                continue
            request_id = entry.fields.get(b"request_id")
            events[public.id] = store.Published(from_public(public), public.merchant_id,
                                                datetime.fromisoformat(public.created_at), public.order_id,
                                                request_id.decode(errors="replace") if request_id else None)
        async with self.pool.acquire() as conn:
            rows = await self._fan_out(conn, list(events.values())) if events else []
            self.hooks.before_ack()  # the reader acknowledges the entries once they are handled
            return await self._admit(conn, rows)

    async def _fan_out(self, conn, events: list[store.Published]) -> list[asyncpg.Record]:
        now = self.clock()
        busy = self._busy()
        self._waiting.update(busy)  # they may have got deliveries left due in the table
        return await store.fan_out(conn, events, now, now + timedelta(seconds=self.settings.lease_s), busy)

    # Retries

    async def sweep(self) -> int:
        """Claim due deliveries (retries, redeliveries, expired leases, ones left for lack of room) and start them."""
        if self._sweeping.locked():
            return 0  # one is running
        async with self._sweeping, self.pool.acquire() as conn:
            now = self.clock()
            # A claimed delivery still held here (its lease ran out while queued) gets a fresh lease and
            # stays where it is: _admit skips it.
            rows = await store.claim_due(conn, now, now + timedelta(seconds=self.settings.lease_s),
                                         self.settings.batch, self._busy())
            return await self._admit(conn, rows)

    def _kick(self, endpoint_id: str) -> None:
        """The endpoint's lane has room again and its deliveries wait in the table: take them now rather
        than at the next sweep."""
        if endpoint_id not in self._refilling and not self._closing:
            self._refilling.add(endpoint_id)
            self._waiting.discard(endpoint_id)
            self._spawn(self._refill(endpoint_id))

    async def _refill(self, endpoint_id: str) -> None:
        try:
            room = self._room(endpoint_id)
            async with self.pool.acquire() as conn:
                now = self.clock()
                rows = await store.claim_due_of(conn, endpoint_id, now,
                                                now + timedelta(seconds=self.settings.lease_s), room)
                if len(rows) == room:
                    self._waiting.add(endpoint_id)  # there may be more
                await self._admit(conn, rows)
        except Exception as exc:  # noqa: BLE001 - faults.report tells a bug from a dependency away
            self._waiting.add(endpoint_id)
            faults.report(log, f"webhooks: taking deliveries of {endpoint_id}", exc, "the sweep retries")
        finally:
            self._refilling.discard(endpoint_id)

    # Sending: one lane per endpoint, so a slow endpoint only ever holds its own lane

    def _room(self, endpoint_id: str) -> int:
        """Deliveries an endpoint's queue may still take: as many as its lane sends in QUEUE_S at its
        recent pace (an endpoint not heard from yet is assumed to take the whole timeout), so that a
        slow endpoint's deliveries wait in the table, where another dispatcher may take them, rather than
        here; never fewer than two rounds of the lane."""
        pace = self._latency.get(endpoint_id, self.settings.timeout_s)
        width = self.settings.per_endpoint
        depth = min(MAX_QUEUE, max(2 * width, int(width * QUEUE_S / max(pace, 0.001))))
        lane = self._lanes.get(endpoint_id)
        return depth - (len(lane.queue) if lane else 0)

    def _busy(self) -> list[str]:
        return [endpoint_id for endpoint_id in self._lanes if self._room(endpoint_id) <= 0]

    async def _admit(self, conn, rows: list[asyncpg.Record]) -> int:
        """Queue what the lanes have room for; the rest is made due again, for a sweep soon after."""
        room: dict[str, int] = {}
        taken, spilled = [], []
        for row in rows:
            if row["delivery_id"] in self._held:
                continue  # already queued here; the claim only renewed its lease
            endpoint_id = row["endpoint_id"]
            room.setdefault(endpoint_id, self._room(endpoint_id))
            if room[endpoint_id] > 0:
                room[endpoint_id] -= 1
                taken.append(row)
            else:
                spilled.append(row["delivery_id"])
                self._waiting.add(endpoint_id)
        if spilled:
            await store.due_at(conn, spilled, self.clock())
        return self._submit(taken)

    def _job(self, row: asyncpg.Record) -> Job:
        signing = [self._open(row["secret_enc"])]
        if row["previous_secret_enc"] and row["previous_secret_expires_at"] > self.clock():
            signing.append(self._open(row["previous_secret_enc"]))
        return Job(delivery_id=row["delivery_id"], event_id=row["event_id"], event_type=row["event_type"],
                   endpoint_id=row["endpoint_id"], livemode=row["livemode"], url=row["url"], secrets=signing,
                   payload=bytes(row["payload"]), attempts=row["attempts"], round_attempts=row["round_attempts"],
                   round_started_at=row["round_started_at"], merchant_id=row["merchant_id"],
                   order_id=row["order_id"], request_id=row["request_id"])

    def _open(self, sealed: str) -> str:
        if sealed not in self._opened:
            self._opened[sealed] = self.vault.open(sealed)
        return self._opened[sealed]

    def _submit(self, rows: list[asyncpg.Record]) -> int:
        started = 0
        for row in rows:
            if row["delivery_id"] in self._held:
                continue
            self._held.add(row["delivery_id"])
            lane = self._lanes.setdefault(row["endpoint_id"], Lane())
            lane.queue.append(self._job(row))
            started += 1
            if lane.active < self.settings.per_endpoint:
                lane.active += 1
                self._spawn(self._run_lane(row["endpoint_id"], lane))
        return started

    def _spawn(self, work) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_lane(self, endpoint_id: str, lane: Lane) -> None:
        try:
            while lane.queue:
                attempt = await self.sender.attempt(lane.queue.popleft())
                # Appended after the await: the writer swaps `_done` for a fresh list meanwhile.
                self._done.append(attempt)
                pace = self._latency.get(endpoint_id, self.settings.timeout_s)
                self._latency[endpoint_id] = 0.8 * pace + 0.2 * attempt.latency_ms / 1000
                self._wake.set()
                if endpoint_id in self._waiting and len(lane.queue) < self.settings.per_endpoint:
                    self._kick(endpoint_id)
        finally:
            lane.active -= 1
            if lane.active == 0 and not lane.queue and self._lanes.get(endpoint_id) is lane:
                del self._lanes[endpoint_id]

    async def renew(self) -> None:
        """Extend the lease of every delivery held here: queued, in flight, or attempted and not yet written (the
        webhooks process runs this three times a lease). Under the writing lock, so that no attempt written
        meanwhile, whose delivery is due at its retry or done, is leased again."""
        async with self._writing:
            if self._held:
                async with self.pool.acquire() as conn:
                    await store.due_at(conn, list(self._held),
                                       self.clock() + timedelta(seconds=self.settings.lease_s))

    async def drain(self) -> None:
        """Wait until every started attempt is sent and written (tests and shutdown)."""
        while True:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
            # Waits for a write in progress too; it may start deliveries of an event it emitted.
            await self._write_batch()
            if not self._tasks and not self._done:
                return

    async def report(self) -> None:
        """The retry queue's gauges (the webhooks process runs this every few seconds)."""
        async with self.pool.acquire() as conn:
            depth, overdue = await store.retry_queue(conn, self.clock())
        metrics.WEBHOOK_RETRY_DEPTH.set(depth)
        metrics.WEBHOOK_OLDEST_DUE.set(overdue)

    # Writing outcomes: one transaction for every attempt that finished meanwhile

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._write_batch()
            except Exception as exc:  # noqa: BLE001 - faults.report tells a bug from a dependency away
                # Kept in memory and still held here, so no sweep sends them again meanwhile.
                faults.report(log, "webhooks: recording attempts", exc, "retrying")
                await asyncio.sleep(0.5)
                self._wake.set()

    async def _write_batch(self) -> None:
        async with self._writing:
            batch, self._done = self._done, []
            if batch:
                await self._write(batch)

    async def _write(self, batch: list[Attempt]) -> None:
        now = self.clock()
        rows = [outcomes.record_row(a, self.jitter) for a in batch]
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                await store.record(conn, rows)
                failing = await endpoints.track_failing(conn, outcomes.failing_rows(batch))
                followers = await self._disable_failing(conn, failing, now)
        except BaseException:
            self._done = batch + self._done
            raise
        self._held.difference_update(a.job.delivery_id for a in batch)
        _log_attempts(batch, [row[1] for row in rows])
        for row in rows:
            _COUNTED[row[1]].inc()
        if followers:
            async with self.pool.acquire() as conn:
                await self._admit(conn, followers)

    async def _disable_failing(self, conn, failing: list[asyncpg.Record], now: datetime) -> list[asyncpg.Record]:
        followers: list[asyncpg.Record] = []
        for ep in failing:
            if ep["status"] != "enabled" or ep["failing_since"] is None:
                continue
            if now - ep["failing_since"] < schedule.GIVE_UP_AFTER:
                continue
            disabled = await endpoints.disable_failing(conn, ep["endpoint_id"], now)
            if disabled is not None:
                event, merchant_id = disabled
                log.warning("webhooks: endpoint %s disabled after failing since %s", ep["endpoint_id"], ep["failing_since"])
                followers += await self._fan_out(conn, [store.Published(event, merchant_id, now)])
        return followers


def _log_attempts(batch: list[Attempt], statuses: list[str]) -> None:
    """A DEBUG line per attempt, a WARNING for a delivery given up. Neither names the URL, which may hold the
    merchant's own credentials, nor the error's text, which may repeat it: only the error's kind."""
    debug = log.isEnabledFor(logging.DEBUG)
    for a, status in zip(batch, statuses):
        if status != "failed" and not debug:
            continue
        job = a.job
        outcome = {"succeeded": "succeeded", "pending": "retrying", "failed": "gave_up"}[status]
        fields = {**job.log_ids(), "attempt": job.attempts + 1, "outcome": outcome, "status_code": a.status_code,
                  "error": a.error.split(":", 1)[0] if a.error else None, "ms": a.latency_ms}
        log.log(logging.WARNING if status == "failed" else logging.DEBUG, "webhooks: %s to %s, attempt %d: %s",
                job.event_id, job.endpoint_id, job.attempts + 1, outcome, extra=fields)
