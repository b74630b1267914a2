"""The peer's group commit: each process gathers the writes that arrive together and commits them at once.

A strong team that does not use actors batches too. The requests of one kind (quick sessions, merchant refunds)
that arrive within a window (about 2 ms) are gathered, up to a batch size (64), and then:
- their signatures are spent together: the batch's `SET NX EX` calls in one Redis pipeline (a spent one is
  answered what its Idempotency-Key recorded, or refused as a replay, as in the one-statement peer);
- a key repeated within the batch waits for the first request that carries it and is answered the body recorded
  for it (a different request under it: `idempotency_key_reused`);
- the rest are written in one transaction: quick sessions in one statement (arrays through `unnest`, the keys
  recorded before answered from the same statement), refunds after locking the batch's orders and deciding them
  in arrival order (several refunds of one order in one statement), with their events, one outbox row per order
  and each key's answer;
- each request is answered once the transaction committed.
A key recorded by another process's batch while this one ran fails the commit on the key's unique index: the
batch is written again, and that key answered what was recorded.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Awaitable, Callable

import asyncpg
from aiohttp import web

from actors.views import RefundView
from common import money
from common.clock import utcnow
from contract import events as ev
from web.edge.errors import ApiError
from web.reads.owned import missing

ATTEMPTS = 5  # writes of a batch that keeps meeting keys recorded by other processes meanwhile


@dataclass(eq=False)
class Entry:
    """One request in a batch: who sent it, its key, its request hash and signature, and what it writes."""
    merchant_id: str
    livemode: bool
    key: str | None
    digest: str
    signature: str
    write: object  # a Session or a Refund
    done: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    recorded: tuple[int, bytes, str] | None = None  # (status, body, request hash) under its key, once known

    @property
    def identity(self) -> tuple[str, bool, str] | None:
        return (self.merchant_id, self.livemode, self.key) if self.key is not None else None

    def answer(self, response: web.Response) -> None:
        if self.key is not None:
            self.recorded = (response.status, response.body, self.digest)
        self.done.set_result(response)

    def answer_recorded(self, status: int, body: bytes, request_hash: str) -> None:
        self.recorded = (status, body, request_hash)
        try:
            self.done.set_result(recorded_answer(status, body, request_hash, self.digest))
        except ApiError as exc:
            self.done.set_exception(exc)


def recorded_answer(status: int, body: bytes, request_hash: str, digest: str) -> web.Response:
    if request_hash != digest:
        raise ApiError(409, "idempotency_key_reused",
                       "This Idempotency-Key was already used with a different request.", "Idempotency-Key")
    return web.Response(body=bytes(body), status=status, content_type="application/json")


class Batcher:
    """Gathers entries for `window_s` or until `size` of them, then hands them to `flush` in a task of its own;
    batches flush side by side (the pool bounds them)."""

    def __init__(self, window_s: float, size: int, flush: Callable[[list[Entry]], Awaitable[None]]):
        self.window_s, self.size, self.flush = window_s, size, flush
        self._gathering: list[Entry] = []
        self._timer: asyncio.TimerHandle | None = None
        self._running: set[asyncio.Task] = set()

    async def submit(self, entry: Entry) -> web.Response:
        self._gathering.append(entry)
        if len(self._gathering) >= self.size:
            self._close()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.window_s, self._close)
        return await asyncio.shield(entry.done)  # a client gone keeps its entry in the batch

    def _close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._gathering = self._gathering, []
        task = asyncio.create_task(self._flush(batch))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _flush(self, batch: list[Entry]) -> None:
        try:
            await self.flush(batch)
        except Exception as exc:  # noqa: BLE001 - PostgreSQL or Redis unreachable: every request of the batch learns it
            for entry in batch:
                if not entry.done.done():
                    entry.done.set_exception(exc)

    async def stop(self) -> None:
        if self._running:
            await asyncio.wait(self._running)


def leaders(batch: list[Entry]) -> tuple[list[Entry], list[tuple[Entry, Entry]]]:
    """The entries to write, and each later entry whose key an earlier one of the batch carries, with that one."""
    first: dict[tuple, Entry] = {}
    written, waiting = [], []
    for entry in batch:
        if entry.identity in first:
            waiting.append((entry, first[entry.identity]))
            continue
        if entry.identity is not None:
            first[entry.identity] = entry
        written.append(entry)
    return written, waiting


def follow(entry: Entry, leader: Entry) -> None:
    """A repeated key's answer, once its first request's is known: what that one recorded."""
    if leader.recorded is not None:
        entry.answer_recorded(*leader.recorded)
    else:  # the first failed before recording anything: so does its repeat
        entry.done.set_exception(leader.done.exception())


async def flushed(batch: list[Entry], spend: Callable[[list[Entry]], Awaitable[list[bool]]],
                  repeat: Callable[[Entry], Awaitable[web.Response]],
                  write: Callable[[list[Entry]], Awaitable[None]]) -> None:
    """A batch: its signatures spent together (`spend`: True for each seen the first time), a spent one answered by
    `repeat`, a key repeated in the batch by its first request, the rest written by `write`."""
    spent = await spend(batch)
    replays = asyncio.gather(*(_settle(entry, repeat(entry)) for entry, new in zip(batch, spent) if not new))
    written, waiting = leaders([entry for entry, new in zip(batch, spent) if new])
    try:
        await write(written)
    except Exception as exc:  # noqa: BLE001 - nothing of the batch committed: each of its requests learns why
        for entry in written:
            if not entry.done.done():
                entry.done.set_exception(exc)
    for entry, leader in waiting:
        follow(entry, leader)
    await replays


async def _settle(entry: Entry, answer: Awaitable[web.Response]) -> None:
    try:
        entry.done.set_result(await answer)
    except Exception as exc:  # noqa: BLE001 - the request's own failure, handed to its waiter
        entry.done.set_exception(exc)


async def retried(write: Callable[[], Awaitable[None]]) -> None:
    """The batch written again while a key it records was committed by another batch meanwhile."""
    for attempt in range(ATTEMPTS):
        try:
            return await write()
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name != "idempotency_pkey" or attempt == ATTEMPTS - 1:
                raise


# What every batch writes besides its own rows: its events, an outbox row per order (the order's events of the
# batch follow each other), and each key's answer; `recorded` names the entries (by `ref`) answered before, whose
# rows are not written. $1 is the batch's time.
_TAIL = """
, events_in AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::jsonb[]) AS e(ref, order_id, seq, body)
    WHERE e.ref NOT IN (SELECT ref FROM recorded)
), new_events AS (
    INSERT INTO peer.events (order_id, seq, event_id, type, merchant_id, livemode, created_at, body)
    SELECT order_id, seq, body ->> 'id', body ->> 'type', body ->> 'merchant_id', (body ->> 'livemode')::boolean, $1,
           body
    FROM events_in
), relayed AS (
    INSERT INTO peer.outbox (order_id, first_seq, last_seq)
    SELECT order_id, min(seq), max(seq) FROM events_in GROUP BY order_id ORDER BY min(seq)
), answered AS (
    INSERT INTO peer.idempotency (merchant_id, livemode, key, request_hash, status, body)
    SELECT merchant_id, livemode, key, request_hash, status, body
    FROM unnest($6::text[], $7::text[], $8::boolean[], $9::text[], $10::text[], $11::int[], $12::bytea[])
         AS a(ref, merchant_id, livemode, key, request_hash, status, body)
    WHERE a.ref NOT IN (SELECT ref FROM recorded)
)
SELECT ref, status, body, request_hash FROM recorded
"""


def _tail_args(at: datetime, events: list[tuple[str, str, int, str]],
               answers: list[tuple[str, Entry, web.Response]]) -> tuple:
    """The tail's parameters: events as (ref, order, seq, JSON) and answers to record as (ref, entry, response)."""
    keyed = [(ref, e, r) for ref, e, r in answers if e.key is not None]
    return (at, *_columns(events, 4), [ref for ref, _, _ in keyed], [e.merchant_id for _, e, _ in keyed],
            [e.livemode for _, e, _ in keyed], [e.key for _, e, _ in keyed], [e.digest for _, e, _ in keyed],
            [r.status for _, _, r in keyed], [r.body for _, _, r in keyed])


def _columns(rows: list[tuple], width: int) -> list[list]:
    return [list(column) for column in zip(*rows)] if rows else [[] for _ in range(width)]


@dataclass
class Session:
    """A quick session ready to write: the order's row and its session's, its events (JSON) and its answer."""
    order_id: str
    order_number: int
    external_ref: str | None
    amount: int
    state: str
    session_id: str
    session_key: str
    expires_at: datetime
    created_at: datetime
    events: list[str]
    answer: web.Response


_SESSIONS = """
WITH batch AS (
    SELECT * FROM unnest($13::text[], $14::text[], $15::boolean[], $16::text[], $17::bigint[], $18::text[],
                         $19::bigint[], $20::jsonb[], $21::text[], $22::text[], $23::timestamptz[], $24::timestamptz[])
         AS b(order_id, merchant_id, livemode, key, order_number, external_ref, amount, state, session_id, session_key,
              expires_at, created_at)
), recorded AS (
    SELECT b.order_id AS ref, i.status, i.body, i.request_hash FROM batch b
    JOIN peer.idempotency i ON i.merchant_id = b.merchant_id AND i.livemode = b.livemode AND i.key = b.key
), fresh AS (
    SELECT * FROM batch WHERE order_id NOT IN (SELECT ref FROM recorded)
), new_orders AS (
    INSERT INTO peer.orders (order_id, merchant_id, livemode, order_number, status, external_ref, amount_owed, version,
                             state, created_at, updated_at)
    SELECT order_id, merchant_id, livemode, order_number, 'PENDING', external_ref, amount, 2, state, created_at,
           created_at
    FROM fresh
), new_sessions AS (
    INSERT INTO peer.checkout_sessions (session_id, session_key, order_id, merchant_id, livemode, status, expires_at)
    SELECT session_id, session_key, order_id, merchant_id, livemode, 'OPEN', expires_at FROM fresh
)""" + _TAIL


async def write_sessions(pool: asyncpg.Pool, entries: list[Entry]) -> None:
    """Quick sessions in one statement, each answered once it committed (or what its key recorded before)."""
    sessions: list[tuple[Entry, Session]] = [(e, e.write) for e in entries]  # type: ignore[misc]
    events = [(s.order_id, s.order_id, seq, body) for _, s in sessions for seq, body in enumerate(s.events, 1)]
    rows = [(s.order_id, e.merchant_id, e.livemode, e.key, s.order_number, s.external_ref, s.amount, s.state,
             s.session_id, s.session_key, s.expires_at, s.created_at) for e, s in sessions]
    args = (*_tail_args(utcnow(), events, [(s.order_id, e, s.answer) for e, s in sessions]), *_columns(rows, 12))
    found: dict[str, asyncpg.Record] = {}

    async def write() -> None:
        found.update((r["ref"], r) for r in await pool.fetch(_SESSIONS, *args))

    await retried(write)
    for entry, session in sessions:
        if (row := found.get(session.order_id)) is not None:
            entry.answer_recorded(row["status"], row["body"], row["request_hash"])
        else:
            entry.answer(session.answer)


@dataclass
class Refund:
    """A merchant refund to decide against its order's row: the refund, and its answer if the order takes it."""
    order_id: str
    refund: RefundView
    answer: web.Response
    event: Callable[[int, str, object], str]  # a public event of the order's, (seq, type, data) to its JSON


_RECORDED = """
SELECT i.merchant_id, i.livemode, i.key, i.status, i.body, i.request_hash
FROM unnest($1::text[], $2::boolean[], $3::text[]) AS k(merchant_id, livemode, key)
JOIN peer.idempotency i USING (merchant_id, livemode, key)
"""
# In the order of their ids, so two batches that lock some of the same orders never wait on each other both ways.
_LOCK = """
SELECT order_id, merchant_id, livemode, order_number, status, amount_paid, refunds_held, version FROM peer.orders
WHERE order_id = ANY($1::text[]) ORDER BY order_id FOR UPDATE
"""
_REFUNDS = """
WITH recorded AS (SELECT NULL::text AS ref, NULL::int AS status, NULL::bytea AS body, NULL::text AS request_hash
                  WHERE false),
held AS (
    UPDATE peer.orders o SET refunds_held = u.held, version = u.version, updated_at = $1,
        state = o.state || jsonb_build_object('version', u.version, 'updated_at', $1::timestamptz)
    FROM unnest($13::text[], $14::bigint[], $15::int[]) AS u(order_id, held, version)
    WHERE o.order_id = u.order_id
), new_refunds AS (
    INSERT INTO peer.refunds (refund_id, order_id, merchant_id, livemode, status, amount, link_token, reason,
                              refund_to_address, refund_network, refund_token_address, source, created_at, updated_at)
    SELECT refund_id, order_id, merchant_id, livemode, 'APPROVED', amount, link_token, reason, refund_to_address,
           refund_network, refund_token_address, 'merchant', $1, $1
    FROM unnest($16::text[], $17::text[], $18::text[], $19::boolean[], $20::bigint[], $21::text[], $22::text[],
                $23::text[], $24::text[], $25::text[])
         AS r(refund_id, order_id, merchant_id, livemode, amount, link_token, reason, refund_to_address,
              refund_network, refund_token_address)
)""" + _TAIL


@dataclass
class _Order:
    """A locked order's row, as the batch's refunds change it."""
    merchant_id: str
    livemode: bool
    number: int
    status: str
    paid: int
    held: int
    version: int
    touched: bool = False


def _refusal(order: _Order | None, entry: Entry, cents: int) -> ApiError | None:
    if order is None or (order.merchant_id, order.livemode) != (entry.merchant_id, entry.livemode):
        return missing("order")
    if order.paid == 0:
        return ApiError(409, "order_not_paid", "This order has received no payment, so nothing can be refunded.",
                        "order_id")
    if order.paid - order.held < cents:
        return ApiError(409, "amount_exceeds_refundable", f"amount {money.format(cents)} is above the refundable"
                        f" balance {money.format(max(order.paid - order.held, 0))}.", "amount")
    return None


def _refund_events(refund: Refund, order: _Order) -> list[str]:
    """The refund's two events, numbered after the order's version."""
    r = refund.refund
    fields = dict(order_id=refund.order_id, order_number=str(order.number), order_status=order.status,
                  refund_id=r.refund_id, amount=money.format(r.amount), reason=r.reason,
                  refund_to_address=r.refund_to_address, refund_network=r.refund_network,
                  refund_token_address=r.refund_token_address, link_token=r.link_token)
    return [refund.event(order.version + 1, "payment.refund.requested",
                         ev.RefundRequested(**fields, refund_status="PENDING", source="merchant", note=None, token=None)),
            refund.event(order.version + 2, "payment.refund.approved",
                         ev.RefundChanged(**fields, refund_status="APPROVED"))]


async def write_refunds(pool: asyncpg.Pool, entries: list[Entry]) -> None:
    """Refunds in one transaction: the batch's orders locked, each refund decided in arrival order against what
    the earlier ones left, all written in one statement; a refusal is recorded under its key as an answer is."""
    outcomes: dict[int, tuple[web.Response | None, asyncpg.Record | None]] = {}

    async def write() -> None:
        outcomes.clear()
        async with pool.acquire() as conn, conn.transaction():
            keyed = [e for e in entries if e.key is not None]
            recorded = {(r["merchant_id"], r["livemode"], r["key"]): r for r in await conn.fetch(
                _RECORDED, [e.merchant_id for e in keyed], [e.livemode for e in keyed], [e.key for e in keyed])}
            refunds: list[tuple[Entry, Refund]] = [(e, e.write) for e in entries]  # type: ignore[misc]
            orders = {r["order_id"]: _Order(r["merchant_id"], r["livemode"], r["order_number"], r["status"],
                                            r["amount_paid"], r["refunds_held"], r["version"])
                      for r in await conn.fetch(_LOCK, sorted({r.order_id for _, r in refunds}))}
            events, answers, rows = [], [], []
            for n, (entry, refund) in enumerate(refunds):
                if (row := recorded.get(entry.identity)) is not None:
                    outcomes[n] = (None, row)
                    continue
                order = orders.get(refund.order_id)
                refusal = _refusal(order, entry, refund.refund.amount)
                answer = refusal.response() if refusal else refund.answer
                if refusal is None:
                    events += [(str(n), refund.order_id, order.version + seq, body)
                               for seq, body in enumerate(_refund_events(refund, order), 1)]
                    order.held, order.version, order.touched = order.held + refund.refund.amount, order.version + 2, True
                    r = refund.refund
                    rows.append((r.refund_id, refund.order_id, entry.merchant_id, entry.livemode, r.amount,
                                 r.link_token, r.reason, r.refund_to_address, r.refund_network,
                                 r.refund_token_address))
                answers.append((str(n), entry, answer))
                outcomes[n] = (answer, None)
            changed = [(order_id, o.held, o.version) for order_id, o in orders.items() if o.touched]
            await conn.execute(_REFUNDS, *_tail_args(utcnow(), events, answers), *_columns(changed, 3),
                               *_columns(rows, 10))

    await retried(write)
    for n, entry in enumerate(entries):
        answer, row = outcomes[n]
        if row is not None:
            entry.answer_recorded(row["status"], row["body"], row["request_hash"])
        else:
            entry.answer(answer)
