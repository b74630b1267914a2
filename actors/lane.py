"""A lane: one read-decide-commit loop over its share of the worker's partitions, on a PostgreSQL connection and
a Redis reader of its own. Per batch it reads (what it must finish first, then new entries), refuses at intake what
only the live runtime can refuse, applies the rest (actors/applier.py), and finishes: set aside what cannot be
applied, reply, acknowledge and publish, overlapping the next batch's database work."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import asyncpg
import msgspec
from redis import exceptions as redis_errors

from actors import batch, intake, store
from actors import messages as m
from actors.applier import Applier
from actors.command_entries import Failure, Message, log_ids, message
from actors.fencing import Fenced
from actors.outcomes import Outcome
from actors.tenure import Lapsed, Tenure
from common import faults, metrics
from common.clock import utcnow
from common.clock_offset import ClockOffset
from streams import dead_letters
from streams.connection import Client, blocking_reader, close_reader
from streams.consumer import Consumer, lost_group, unblocked
from streams.events import publication
from streams.names import Keys
from streams.pipeliner import Pipeliner
from streams.producer import reply_call

log = logging.getLogger(__name__)
_decode_reply = msgspec.json.Decoder(m.Reply).decode
_OK, _REFUSED, _RETRIED, _DEAD = (metrics.COMMANDS.labels(o) for o in ("ok", "refused", "retried", "dead_lettered"))


@dataclass
class Crew:
    """What a worker's lanes share: its connections, its applier, and which partitions they may read."""

    pool: asyncpg.Pool
    redis: Client
    keys: Keys
    worker_id: str
    consumer: Consumer
    pipeliner: Pipeliner  # replies, acks and events of every lane, written together
    applier: Applier
    clock: ClockOffset | None
    lanes: int
    batch_size: int
    max_deliveries: int
    max_skew_s: float
    tenure: Tenure  # the partitions the lanes may read, and under which lease epochs
    idle_ms: int  # a pending entry idle this long was left by a reader that lost its lease: claimed by the sweep
    reclaim: set[int] = field(default_factory=set)  # partitions whose pending entries are read before new ones
    sweep: set[int] = field(default_factory=set)  # partitions whose long-idle pending entries are read next

    async def clock_holds(self) -> bool:
        """Measured again now: whether this worker's clock is within the bound of Redis's."""
        return self.clock is None or await self.clock.check()


class Lane:
    def __init__(self, number: int, crew: Crew):
        self.number, self.crew = number, crew
        self.reader = blocking_reader(crew.redis)  # its reads block while waiting for commands
        # Replies, acks and publication of the last batch, overlapping the next batch's database work.
        self.finishing: asyncio.Task | None = None
        # Batches whose events are on the stream: their outbox rows go with the lane's next commit.
        self.published: list[str] = []
        self._stream_partition = {crew.keys.commands(p): p for p in range(crew.keys.partitions)}

    async def serve(self, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    async with self.crew.pool.acquire() as conn:
                        while not stop.is_set():
                            await self.step(conn, block_ms=200)
                        await self._finish_previous()
                except faults.UNAVAILABLE as exc:
                    faults.unavailable(log, f"worker {self.crew.worker_id}: a lane", exc, "retrying")
                    await self.reset()
                    await asyncio.sleep(0.5)
        finally:
            await close_reader(self.crew.redis, self.reader)

    async def reset(self) -> None:
        """After the lane failed: whatever it read but did not finish is read again, on a connection of its own."""
        self.crew.reclaim |= self.partitions()
        self.finishing = None
        await close_reader(self.crew.redis, self.reader)
        self.reader = blocking_reader(self.crew.redis)

    def partitions(self) -> set[int]:
        return {p for p in self.crew.tenure.serving if p % self.crew.lanes == self.number}

    async def step(self, conn: asyncpg.Connection, block_ms: int) -> None:
        partitions = self.partitions()
        if not partitions:
            await asyncio.sleep(block_ms / 1000)
            return
        held = self.crew.tenure.held(partitions)
        try:
            messages = await self.crew.tenure.read(self._read(partitions, block_ms))
        except Lapsed:
            await self.reset()  # the cancelled read's connection is in no known state
            return
        except redis_errors.ResponseError as exc:
            if not (lost_group(exc) or unblocked(exc)):
                raise
            # Redis lost the streams (a restart without persistence): the next lease refresh makes them again.
            log.warning("worker %s: consumer groups gone from %s; making them again", self.crew.worker_id,
                        sorted(partitions))
            self.crew.tenure.serving -= partitions
            return
        current = self.crew.tenure.still_held(held)
        # Read under a lease that lapsed or changed hands meanwhile: not applied, left pending for the holder.
        messages = [msg for msg in messages if self._stream_partition[msg.stream] in current]
        if messages:
            await self._handle(conn, messages, held)
        elif self.published:
            # Idle: nothing to fold the outbox deletion into, and the sweep must not publish these again.
            await store.drop_outbox(conn, self._take_published())

    async def _finish_previous(self) -> None:
        if self.finishing is not None:
            task, self.finishing = self.finishing, None
            await task

    def _take_published(self) -> list[str]:
        taken, self.published = self.published, []
        return taken

    async def _read(self, partitions: set[int], block_ms: int) -> list[Message]:
        crew = self.crew
        reclaiming = sorted(crew.reclaim & partitions)
        sweeping = sorted((crew.sweep & partitions) - crew.reclaim)
        if reclaiming or sweeping:
            await self._finish_previous()  # its acks first: what it finished is not ours to read again
        messages: list[Message] = []
        for p, idle_ms in [(p, 0) for p in reclaiming] + [(p, crew.idle_ms) for p in sweeping]:
            # Whatever a dead or previous owner left unacknowledged, or a command that raised, is ours to finish
            # first; and so is what a worker whose lease lapsed read late, after its successor's claim.
            messages += [message(e) for e in await crew.consumer.claim(crew.keys.commands(p), crew.batch_size,
                                                                       idle_ms, deliveries=True)]
            crew.reclaim.discard(p)
            crew.sweep.discard(p)
        if messages:
            return messages
        found = await crew.consumer.read(self.reader, [crew.keys.commands(p) for p in sorted(partitions)],
                                         crew.batch_size, block_ms)
        return [message(entry) for entry in found]

    async def _handle(self, conn: asyncpg.Connection, messages: list[Message], held: dict[int, int]) -> None:
        crew = self.crew
        metrics.BATCH_SIZE.observe(len(messages))
        readable = [msg for msg in messages if msg.envelope is not None]
        now = utcnow()
        refusals = {msg.entry_id: refusal for msg in readable
                    if (refusal := intake.refusal(msg.envelope, msg.fields.get(b"first_entry", msg.entry_id),
                                                  self._stream_partition[msg.stream],
                                                  crew.keys.partition_of(msg.envelope.command.order_id), now,
                                                  crew.max_skew_s))}
        if any(r.reader_clock for r in refusals.values()) and not await crew.clock_holds():
            # Not the entries' fault but this worker's clock: the batch stays pending, unanswered and uncounted,
            # for the healthy worker that takes these partitions once the lease keeper gives them up.
            crew.tenure.serving.clear()
            return
        refused = {entry_id: Failure(refusal.reason) for entry_id, refusal in refusals.items()}
        envelopes = [msg.envelope for msg in readable if msg.entry_id not in refused]
        read_from = {self._stream_partition[msg.stream] for msg in messages}
        try:
            outcomes = await self._apply(conn, envelopes, {(p, held[p]) for p in read_from})
        except Fenced as fenced:
            # Nothing of the batch was written: its entries stay pending, for the holder, or for this lane where
            # its partitions are still its own.
            crew.tenure.refused(fenced, held)
            crew.reclaim |= read_from
            return
        if refused:
            applied = iter(outcomes)
            outcomes = [refused[msg.entry_id] if msg.entry_id in refused else next(applied) for msg in readable]
        crew.applier.hooks.after_commit()
        await self._finish_previous()
        self.finishing = asyncio.create_task(self._finish(messages, readable, outcomes))

    async def _apply(self, conn: asyncpg.Connection, envelopes: list[m.Envelope],
                     fences: set[tuple[int, int]]) -> list[Outcome | Failure]:
        crew = self.crew
        published = self._take_published()
        try:
            return await crew.applier.apply(conn, envelopes, published, fences)
        except BaseException as exc:
            self.published += published  # the statement that would have dropped them did not commit
            if not isinstance(exc, Exception) or isinstance(exc, (faults.UNAVAILABLE, Fenced)):
                raise
            log.warning("batch of %d failed (%r); applying one by one", len(envelopes), exc)
            return [await crew.applier.apply_alone(conn, env, fences) for env in envelopes]

    async def _finish(self, messages: list[Message], readable: list[Message],
                      outcomes: list[Outcome | Failure]) -> None:
        crew = self.crew
        # One reply entry per web process and batch: each holds a JSON array of that process's replies.
        replies: dict[str, list[tuple[bytes, str]]] = {}  # with the hash of the request each answers
        retried: set[bytes] = set()
        dead = [(msg, Failure(msg.undecodable)) for msg in messages if msg.envelope is None]
        undecodable = len(dead)
        for msg, _ in dead:
            if msg.addressed.command_id and msg.addressed.reply_to:
                replies.setdefault(msg.addressed.reply_to, []).append(
                    (batch.internal_error_reply(msg.addressed.command_id), ""))
        answered: list[tuple[m.Envelope, Outcome]] = []
        for msg, outcome in zip(readable, outcomes):
            if isinstance(outcome, Failure):
                if outcome.retry and msg.deliveries < crew.max_deliveries:
                    retried.add(msg.entry_id)  # left pending: read again, and counted, by the next claim
                    crew.reclaim.add(crew.keys.partition_of(msg.envelope.command.order_id))
                    continue
                dead.append((msg, outcome))
                outcome = batch.internal_error(msg.envelope)
            answered.append((msg.envelope, outcome))
            if msg.envelope.reply_to:
                replies.setdefault(msg.envelope.reply_to, []).append((outcome.reply, msg.envelope.request_hash))
        if dead:
            # Set aside before they are acknowledged: a crash between the two keeps them pending, never lost.
            await crew.pipeliner.call_many([self._set_aside(msg, failure) for msg, failure in dead])
            _DEAD.inc(len(dead))
        if log.isEnabledFor(logging.DEBUG):
            _log_answered(answered)
        # Counted before the replies go: a client that has its answer finds its command counted.
        _RETRIED.inc(len(retried))
        ok = sum(1 for _env, outcome in answered if _answered_ok(outcome.reply))
        _OK.inc(ok)
        _REFUSED.inc(len(answered) - ok - (len(dead) - undecodable))  # a dead letter's answer is no refusal
        appended = [(a, env.request_id) for env, o in answered for a in o.appended]
        await crew.pipeliner.call_many(
            [reply_call(stream, answers) for stream, answers in replies.items()]
            + [crew.consumer.ack_call(stream, entry_ids)
               for stream, entry_ids in _by_stream([msg for msg in messages if msg.entry_id not in retried]).items()]
            + publication(crew.keys, [(a.payload, request_id) for a, request_id in appended])
        )
        if appended:
            self.published.append(appended[0][0].event_id)  # a batch's outbox row is named by its first event

    def _set_aside(self, msg: Message, failure: Failure) -> tuple:
        command_id = msg.envelope.command_id if msg.envelope else msg.addressed.command_id
        log.error("worker %s: command %s (entry %s of %s) set aside after %d deliveries: %s", self.crew.worker_id,
                  command_id or "-", msg.entry_id.decode(), msg.stream, msg.deliveries, failure.error,
                  extra=log_ids(msg.envelope) if msg.envelope else {"command_id": command_id})
        return dead_letters.set_aside_call(self.crew.keys, msg.stream, msg.entry_id, command_id, msg.deliveries,
                                           failure.error, failure.trace, utcnow().isoformat(),
                                           msg.fields.get(b"m", b""))


def _log_answered(answered: list[tuple[m.Envelope, Outcome]]) -> None:
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
