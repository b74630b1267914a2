"""The actor worker: owns partitions, runs each order's commands one at a time, commits in groups.

The worker's partitions are shared out among a few lanes, each with its own PostgreSQL
connection, so that one lane decides its batch while another waits for its commit. Per batch a
lane reads from its partitions, answers already-recorded commands from the dedupe table, runs
the rest through their order's pure transitions, commits everything in one transaction, then
replies, acks and publishes. A batch whose orders the worker holds, or creates under numbers it
holds, reads nothing first: the dedupe table's unique key refuses its commit if one of its
commands was recorded before, and it is decided again the long way. A crash anywhere before the
ack leaves the commands pending; the next owner re-reads them and the dedupe rows make the replay
harmless.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import traceback
from collections import OrderedDict
from collections.abc import Awaitable
from datetime import timedelta

import asyncpg
import msgspec
from redis import exceptions as redis_errors

from actors import batch, intake, store
from actors import messages as m
from actors.leases import Leases
from actors.numbers import NumberBlocks
from actors.order import Order
from common import faults, metrics
from common.clock import utcnow
from common.clock_offset import ClockOffset
from streams import retention
from streams.connection import Client, blocking_reader, close_reader, read_group
from streams.names import ACTORS_GROUP, Keys
from streams.pipeliner import Pipeliner

log = logging.getLogger(__name__)
_decode_envelope = msgspec.json.Decoder(m.Envelope).decode
_decode_addressed = msgspec.json.Decoder(m.Addressed).decode
_decode_reply = msgspec.json.Decoder(m.Reply).decode
CACHE_SIZE = 50_000
REPLY_STREAM_MAXLEN = 10_000
TRIM_EVERY_S = 30.0
# ARGV holds pairs: an event's payload and the request id of the command that caused it ('' when none did).
_APPEND_EACH = """
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('XADD', KEYS[1], '*', 'e', ARGV[i])
  else redis.call('XADD', KEYS[1], '*', 'e', ARGV[i], 'request_id', ARGV[i + 1]) end
end
return #ARGV / 2
"""
RESTART_DELAY_S = 0.5  # before a lane or the lease keeper that died starts again
_OK, _REFUSED, _RETRIED, _DEAD = (metrics.COMMANDS.labels(o) for o in ("ok", "refused", "retried", "dead_lettered"))
_AT_ONCE, _PREPARED, _AGAIN = (metrics.BATCHES.labels(how) for how in ("at_once", "prepared", "decided_again"))


class BatchHooks:
    """The moments of a batch's commit. They do nothing here; the crash tests subclass them to kill the worker
    at each moment, as a kill -9 would (tests/support/crashing.py)."""

    def before_commit(self) -> None:
        pass

    async def commit(self, statement: Awaitable) -> None:
        await statement

    def after_commit(self) -> None:
        pass


class Message(msgspec.Struct):
    stream: str
    entry_id: bytes
    envelope: m.Envelope | None
    fields: dict
    deliveries: int = 1  # how often Redis has handed this entry out, this time included
    undecodable: str = ""  # why there is no envelope
    addressed: m.Addressed = m.Addressed()  # of an undecodable entry, whatever names its command and caller


class Failure(msgspec.Struct, frozen=True):
    """A command that cannot be applied, set aside with this account: one the core raised on (not a refusal) is
    retried first; one refused at intake or for breaking an invariant never could be."""

    error: str
    trace: str = ""
    retry: bool = False


class Lane:
    """One read-decide-commit loop over a share of the worker's partitions."""

    def __init__(self, number: int, reader: Client):
        self.number = number
        self.reader = reader  # its reads block while waiting for commands
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
    def __init__(self, pool: asyncpg.Pool, redis: Client, keys: Keys, worker_id: str,
                 lease_ttl_ms: int = 5000, batch_size: int = 500, lanes: int = 2, *,
                 max_deliveries: int = 5, retention_s: int = 86_400, max_skew_s: float = 300,
                 hooks: BatchHooks | None = None, numbers: NumberBlocks | None = None,
                 clock: ClockOffset | None = None):
        self.pool = pool
        # Checked before every lease refresh: a worker whose clock is off holds no partition (common/clock_offset.py).
        self.clock = clock
        self.numbers = numbers or NumberBlocks()  # shared by the lanes
        self.hooks = hooks or BatchHooks()
        self.redis = redis
        self.keys = keys
        self.worker_id = worker_id
        self.batch_size = batch_size
        self.max_deliveries = max_deliveries
        self.max_skew_s = max_skew_s
        self.retention_s = retention_s
        self.lanes = [Lane(n, blocking_reader(redis)) for n in range(lanes)]
        self.tasks: dict[asyncio.Task, Lane | None] = {}  # the running lanes, and the lease keeper (None)
        self.leases = Leases(redis, keys, worker_id, lease_ttl_ms)
        self.pipeliner = Pipeliner(redis)  # replies, acks and events of every lane, written together
        self._lease_every = lease_ttl_ms / 3000
        self._cache: OrderedDict[str, Order] = OrderedDict()
        self._reclaim: set[int] = set()
        self._serving: set[int] = set()  # owned partitions the lanes may read
        self._stream_partition = {keys.commands(p): p for p in range(keys.partitions)}

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
                        await self._reset(lane)
                    await asyncio.sleep(RESTART_DELAY_S)
                    self._start(lane, stop)
        finally:
            stopping.cancel()
            if self.tasks:
                await asyncio.wait(self.tasks)
            await self.leases.release_all()
            await self.pipeliner.stop()

    def _start(self, lane: Lane | None, stop: asyncio.Event) -> None:
        task = asyncio.create_task(self._keep_leases(stop) if lane is None else self._serve(lane, stop))
        self.tasks[task] = lane

    async def _reset(self, lane: Lane) -> None:
        """After a lane died: whatever it read but did not finish is read again, on a connection of its own."""
        self._reclaim |= self._partitions(lane)
        lane.finishing = None
        await close_reader(self.redis, lane.reader)
        lane.reader = blocking_reader(self.redis)

    async def _keep_leases(self, stop: asyncio.Event) -> None:
        trimmed_at = 0.0
        while not stop.is_set():
            try:
                if not await self._clock_holds():
                    await self._stand_aside()
                    await asyncio.sleep(self._lease_every)
                    continue
                await self._refresh_leases()
                if time.monotonic() - trimmed_at >= TRIM_EVERY_S:
                    trimmed_at = time.monotonic()
                    await self._trim()
            except faults.UNAVAILABLE as exc:
                log.warning("worker %s: leases not renewed (%s); retrying", self.worker_id, exc)
            try:
                await asyncio.wait_for(stop.wait(), self._lease_every)
            except TimeoutError:
                pass

    async def _serve(self, lane: Lane, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    async with self.pool.acquire() as conn:
                        while not stop.is_set():
                            await self._step(lane, conn, block_ms=200)
                        await lane.finish_previous()
                except faults.UNAVAILABLE as exc:
                    log.warning("worker %s: dependency unavailable (%s); retrying", self.worker_id, exc)
                    await self._reset(lane)
                    await asyncio.sleep(0.5)
        finally:
            await close_reader(self.redis, lane.reader)

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

    async def _stand_aside(self) -> None:
        """Serve nothing and hold nothing: the lanes stop reading at once, the leases go to healthy workers, and
        what this worker read but did not finish stays pending for them."""
        self._serving.clear()
        if self.leases.owned:
            log.warning("worker %s: giving up partitions %s", self.worker_id, sorted(self.leases.owned))
        await self.leases.release_all()

    async def _clock_holds(self) -> bool:
        """Measured again now: whether this worker's clock is within the bound of Redis's."""
        return self.clock is None or await self.clock.check()

    async def _refresh_leases(self) -> None:
        gained, lost = await self.leases.refresh(self.clock.shared_ms() if self.clock is not None else None)
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
        reclaiming = sorted(self._reclaim & partitions)
        if reclaiming:
            await lane.finish_previous()  # its acks first: what it finished is not ours to read again
        messages: list[Message] = []
        for p in reclaiming:
            # Whatever a dead or previous owner left unacknowledged, or a command that raised, is ours to finish
            # first.
            messages += await self._claim(self.keys.commands(p))
            self._reclaim.discard(p)
        if messages:
            return messages
        found = await read_group(lane.reader, ACTORS_GROUP, self.worker_id,
                                 [self.keys.commands(p) for p in sorted(partitions)], self.batch_size, block_ms)
        return [self._message(stream, e, f) for stream, e, f in found]

    async def _claim(self, stream: str) -> list[Message]:
        claimed = await self.redis.xautoclaim(stream, ACTORS_GROUP, self.worker_id, min_idle_time=0,
                                              count=self.batch_size)
        entries = [(e, f) for e, f in claimed[1] if f]  # Redis 6.2 lists entries deleted while pending, empty
        if not entries:
            return []
        pending = await self.redis.xpending_range(stream, ACTORS_GROUP, min=entries[0][0], max=entries[-1][0],
                                                  count=self.batch_size, consumername=self.worker_id)
        deliveries = {p["message_id"]: p["times_delivered"] for p in pending}
        return [self._message(stream, e, f, deliveries.get(e, 1)) for e, f in entries]

    @staticmethod
    def _message(stream: str, entry_id: bytes, fields: dict, deliveries: int = 1) -> Message:
        try:
            return Message(stream, entry_id, _decode_envelope(fields[b"m"]), fields, deliveries)
        except KeyError:
            why = "no field `m`"
        except msgspec.DecodeError as exc:  # garbage, an unknown command kind, a field of the wrong type
            why = str(exc)
        try:
            addressed = _decode_addressed(fields[b"m"])
        except (KeyError, msgspec.DecodeError):
            addressed = m.Addressed()
        return Message(stream, entry_id, None, fields, deliveries, f"undecodable: {why}", addressed)

    async def _handle(self, lane: Lane, conn: asyncpg.Connection, messages: list[Message]) -> None:
        metrics.BATCH_SIZE.observe(len(messages))
        readable = [msg for msg in messages if msg.envelope is not None]
        now = utcnow()
        refusals = {msg.entry_id: refusal for msg in readable
                    if (refusal := intake.refusal(msg.envelope, msg.fields.get(b"first_entry", msg.entry_id),
                                                  self._stream_partition[msg.stream],
                                                  self.keys.partition_of(msg.envelope.command.order_id), now,
                                                  self.max_skew_s))}
        if any(r.reader_clock for r in refusals.values()) and not await self._clock_holds():
            # Not the entries' fault but this worker's clock: the batch stays pending, unanswered and uncounted,
            # for the healthy worker that takes these partitions once the lease keeper gives them up.
            self._serving.clear()
            return
        refused = {entry_id: Failure(refusal.reason) for entry_id, refusal in refusals.items()}
        envelopes = [msg.envelope for msg in readable if msg.entry_id not in refused]
        published = lane.take_published()
        try:
            outcomes: list[store.Outcome | Failure] = await self._apply(conn, envelopes, published)
        except BaseException as exc:
            lane.published += published  # the statement that would have dropped them did not commit
            if not isinstance(exc, Exception) or isinstance(exc, faults.UNAVAILABLE):
                raise
            log.warning("batch of %d failed (%r); applying one by one", len(envelopes), exc)
            outcomes = [await self._apply_alone(conn, env) for env in envelopes]
        if refused:
            applied = iter(outcomes)
            outcomes = [refused[msg.entry_id] if msg.entry_id in refused else next(applied) for msg in readable]
        self.hooks.after_commit()
        await lane.finish_previous()
        lane.finishing = asyncio.create_task(self._finish(lane, messages, readable, outcomes))

    async def _finish(self, lane: Lane, messages: list[Message], readable: list[Message],
                      outcomes: list[store.Outcome | Failure]) -> None:
        # One reply entry per web process and batch: each holds a JSON array of that process's replies.
        replies: dict[str, list[bytes]] = {}
        retried: set[bytes] = set()
        dead = [(msg, Failure(msg.undecodable)) for msg in messages if msg.envelope is None]
        undecodable = len(dead)
        for msg, _ in dead:
            if msg.addressed.command_id and msg.addressed.reply_to:
                replies.setdefault(msg.addressed.reply_to, []).append(batch.internal_error_reply(msg.addressed.command_id))
        answered: list[tuple[m.Envelope, store.Outcome]] = []
        for msg, outcome in zip(readable, outcomes):
            if isinstance(outcome, Failure):
                if outcome.retry and msg.deliveries < self.max_deliveries:
                    retried.add(msg.entry_id)  # left pending: read again, and counted, by the next claim
                    self._reclaim.add(self.keys.partition_of(msg.envelope.command.order_id))
                    continue
                dead.append((msg, outcome))
                outcome = batch.internal_error(msg.envelope)
            answered.append((msg.envelope, outcome))
            if msg.envelope.reply_to:
                replies.setdefault(msg.envelope.reply_to, []).append(outcome.reply)
        if dead:
            # Set aside before they are acknowledged: a crash between the two keeps them pending, never lost.
            await self.pipeliner.call_many([self._dead_letter(msg, failure) for msg, failure in dead])
            _DEAD.inc(len(dead))
        if log.isEnabledFor(logging.DEBUG):
            _log_answered(answered)
        # Counted before the replies go: a client that has its answer finds its command counted.
        _RETRIED.inc(len(retried))
        ok = sum(1 for _env, outcome in answered if _answered_ok(outcome.reply))
        _OK.inc(ok)
        _REFUSED.inc(len(answered) - ok - (len(dead) - undecodable))  # a dead letter's answer is no refusal
        appended = [(a, env.request_id) for env, o in answered for a in o.appended]
        await self.pipeliner.call_many(
            [("XADD", stream, "MAXLEN", "~", REPLY_STREAM_MAXLEN, "*", "r", b"[" + b",".join(answers) + b"]")
             for stream, answers in replies.items()]
            + [("XACK", stream, ACTORS_GROUP, *entry_ids)
               for stream, entry_ids in _by_stream([msg for msg in messages if msg.entry_id not in retried]).items()]
            + self._publish([(a.payload, request_id) for a, request_id in appended])
        )
        if appended:
            lane.published.append(appended[0][0].event_id)  # a batch's outbox row is named by its first event

    def _publish(self, events: list[tuple[bytes, str]]) -> list[tuple]:
        return publication(self.keys, events)

    def _dead_letter(self, msg: Message, failure: Failure) -> tuple:
        command_id = msg.envelope.command_id if msg.envelope else msg.addressed.command_id
        log.error("worker %s: command %s (entry %s of %s) set aside after %d deliveries: %s", self.worker_id,
                  command_id or "-", msg.entry_id.decode(), msg.stream, msg.deliveries, failure.error,
                  extra=log_ids(msg.envelope) if msg.envelope else {"command_id": command_id})
        return ("XADD", self.keys.dead_letters, "*", "stream", msg.stream, "entry_id", msg.entry_id,
                "command_id", command_id, "deliveries", msg.deliveries,
                "error", failure.error, "trace", failure.trace, "at", utcnow().isoformat(),
                "m", msg.fields.get(b"m", b""))

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

    async def _apply(self, conn: asyncpg.Connection, envelopes: list[m.Envelope],
                     published: list[str]) -> list[store.Outcome | Failure]:
        # The batch decides on the orders it found cached before its first await: a lease change or another
        # lane's batch may drop them from the cache meanwhile, and an order neither cached nor read would be
        # answered order_not_found.
        held = {order_id: self._cache[order_id] for order_id in {e.command.order_id for e in envelopes}
                if order_id in self._cache}
        needed = batch.creations(envelopes)
        self.numbers.note(needed)
        if self._nothing_to_read(envelopes, held, needed):
            # Every order is held or new, and new ones have their numbers. A command recorded before (a retry) or
            # a new order that exists after all makes the commit fail on its unique key, and the batch is decided
            # again against what PostgreSQL holds.
            try:
                nothing_read = store.Prepared({}, {}, {}, {})
                outcomes = await self._decide_and_commit(conn, envelopes, nothing_read, held, published)
                _AT_ONCE.inc()
                return outcomes
            except asyncpg.UniqueViolationError:
                _AGAIN.inc()
        prepared = await store.prepare(conn, batch.wanted(envelopes, held, self.numbers))
        for order in prepared.orders.values():
            self._remember(order)
        _PREPARED.inc()
        return await self._decide_and_commit(conn, envelopes, prepared, held | prepared.orders, published)

    def _nothing_to_read(self, envelopes: list[m.Envelope], held: dict[str, Order], needed: dict) -> bool:
        """Whether the batch can be decided on what the worker holds: each command creates an order under a number
        the worker holds or acts on an order it holds (as committed: its partitions are its own), and none needs
        a lookup of its own (a posted refund transfer's claim, a repeated signature's recorded answer)."""
        return (all(e.command.order_id in held or batch.needs_number(e.command) for e in envelopes)
                and self.numbers.covers(needed)
                and not any(e.recorded_only or isinstance(e.command, m.SubmitRefundTx) for e in envelopes))

    async def _decide_and_commit(self, conn: asyncpg.Connection, envelopes: list[m.Envelope], prepared: store.Prepared,
                                 found: dict[str, Order], published: list[str]) -> list[store.Outcome | Failure]:
        decided = batch.decide_batch(envelopes, prepared, found, self.numbers)
        self.hooks.before_commit()
        try:
            # One statement, so one transaction of its own: no BEGIN and COMMIT round trips around it.
            started = time.perf_counter()
            await self.hooks.commit(store.commit(conn, decided.fresh, decided.changed, decided.encoded, published,
                                                 found))
            metrics.COMMIT_DURATION.observe(time.perf_counter() - started)
        except BaseException as exc:
            for order_id in decided.changed:
                self._cache.pop(order_id, None)
            if isinstance(exc, asyncpg.PostgresError) and not isinstance(exc, faults.UNAVAILABLE):
                # PostgreSQL refused the statement, so none of its orders was stored: their numbers go to the next
                # new orders. After a lost connection the commit may have happened, and they are not reused.
                for key, number in decided.numbered:
                    self.numbers.give_back(key, number)
            raise
        for order in decided.changed.values():
            self._remember(order)
        if not decided.broken:
            return decided.outcomes
        return [Failure(f"{decided.broken[o.command_id].code}: {decided.broken[o.command_id].message}")
                if o.command_id in decided.broken else o for o in decided.outcomes]

    async def _apply_alone(self, conn: asyncpg.Connection, env: m.Envelope) -> store.Outcome | Failure:
        self._cache.pop(env.command.order_id, None)
        try:
            [outcome] = await self._apply(conn, [env], [])
            return outcome
        except faults.UNAVAILABLE:
            raise
        except asyncpg.PostgresError as exc:
            log.error("command %s refused by the database: %s", env.command_id, exc, extra=log_ids(env))
            # Class 22 (data exception: NUL in text, a number out of range) and check violations are about the
            # command's content; anything else may pass.
            return batch.failed(env, isinstance(exc, (asyncpg.DataError, asyncpg.CheckViolationError)))
        except Exception as exc:
            log.exception("command %s raised in the core", env.command_id, extra=log_ids(env))
            return Failure(f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc, limit=-8)), retry=True)

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
            # The outbox keeps no request ids: events a crash left there reach the webhooks without theirs.
            await self.pipeliner.call_many(self._publish([(payload, "") for _batch_id, payloads in rows
                                                          for payload in payloads]))
            await store.drop_outbox(conn, [batch_id for batch_id, _ in rows])
        return len(rows)

    async def keep_outbox_swept(self, stop: asyncio.Event, every_s: float = 2.0) -> None:
        """Sweep until told to stop. A failed sweep is retried at the next one; one that fails for a fault of
        this code says so with its traceback, or the events it leaves in the outbox would wait unnoticed."""
        while not stop.is_set():
            try:
                await self.sweep_outbox()
            except Exception as exc:  # noqa: BLE001 - faults.report tells a bug from a dependency away
                faults.report(log, f"worker {self.worker_id}: outbox sweep", exc, "the next sweep retries")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)


def publication(keys: Keys, events: list[tuple[bytes, str]]) -> list[tuple]:
    """The events (payload, request id) onto their stream in one call: a reply per event would cost more than
    appending them."""
    return [("EVAL", _APPEND_EACH, 1, keys.events, *[part for event in events for part in event])] if events else []


def log_ids(env: m.Envelope) -> dict[str, str]:
    """The ids a log line about this command carries."""
    cmd = env.command
    return {"request_id": env.request_id, "command_id": env.command_id, "order_id": cmd.order_id,
            "merchant_id": cmd.merchant_id}


def _log_answered(answered: list[tuple[m.Envelope, store.Outcome]]) -> None:
    """One DEBUG line per command a batch answered: at INFO, a worker applying thousands a second would spend
    more on its log than on some of its commands."""
    for env, outcome in answered:
        reply = _decode_reply(outcome.reply)
        result = "ok" if reply.ok else reply.error.code
        kind = env.command.__struct_config__.tag
        log.debug("command %s %s: %s, %d events", env.command_id, kind, result, len(outcome.appended),
                  extra={**log_ids(env), "kind": kind, "outcome": result, "events": len(outcome.appended)})


def _answered_ok(reply: bytes) -> bool:
    """Whether an encoded m.Reply says ok, without decoding the order's view it carries: `ok` follows the
    command id, and a quote inside an id is escaped, so the pattern cannot occur earlier."""
    return reply.find(b'"ok":true', 0, 300) != -1


def _by_stream(messages: list[Message]) -> dict[str, list[bytes]]:
    grouped: dict[str, list[bytes]] = {}
    for msg in messages:
        grouped.setdefault(msg.stream, []).append(msg.entry_id)
    return grouped
