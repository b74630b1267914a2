"""The conventional rival of the pipeline: the same API on aiohttp and asyncpg, with its writes committed in groups
(`--mode group-commit`, the default) or one SQL statement per request (`--mode one-statement`).

What a careful team would build without streams and actors. Each request checks its HMAC signature (the
merchant's sealed secret opened once and cached). In group-commit mode each process gathers the quick sessions and
the refunds that arrive together (`--window-ms`, 2, or `--batch-size`, 64 requests) and commits them in one
transaction, signatures spent in one Redis pipeline (bench/group_commit.py). In one-statement mode a request spends
its signature in Redis (SET NX EX) and then writes in one statement (one round trip, one implicit commit) all it
changes: the order with its state as jsonb, its session,
its refunds, its events, an outbox row and, when the request carries an Idempotency-Key, the answer recorded for
that key. The tables are the peer's own, in the schema `peer`, with the service's indexes (it needs the service's
tables migrated beside them, to take their definitions). Order numbers come from a sequence a hundred at a time. A
relay in each process moves outbox rows to the events stream.

A refund fits beside the others in the statement itself (a conditional UPDATE of the order's held total), so
concurrent refunds never exceed what was paid. A test-mode payment, which only sets up the benchmark's paid
orders, reads the order, decides, and writes if the order has not changed since (optimistic concurrency).

A test-mode payment (the benchmark's set-up) and the order's read are served alike in both modes.

    python bench/peer.py --port 8091   # DATABASE_URL, REDIS_URL, REDIS_PREFIX, SERVICE_MASTER_KEY as for `service web`
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import NamedTuple

import asyncpg
import msgspec
import uvloop
from aiohttp import web
from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from accounts import merchants
from accounts.merchants import ApiKey
from actors.publication import PublicEvent
from actors.statuses import OrderStatus, RefundStatus, SessionStatus
from actors.views import OrderView, PaymentView, RefundView, SessionView
from actors.views import decode as decode_view
from bench import group_commit
from bench.group_commit import Batcher, Entry
from common import config, db, faults, lifecycle, money
from common.clock import iso, utcnow
from common.ids import random_id
from common.secrets import Vault
from contract import events as ev
from streams.names import Keys
from streams.pipeliner import Pipeliner
from web.api import bodies
from web.api.answers import order_json, refund_json, respond, session_created_json
from web.api.chain_inputs import refund_destination
from web.api.commands import amount
from web.api.routes import PREFIX
from web.edge.auth import MILLISECONDS_FROM
from web.edge.decoding import decode
from web.edge.errors import ApiError, error_middleware
from web.edge.idempotency import idempotency_key, request_hash
from web.edge.key_cache import KeyCache
from web.edge.signing import matches, replay_ttl, replayed
from web.reads.owned import missing

log = logging.getLogger("peer")
_encode = msgspec.json.Encoder().encode
BLOCK = 100  # order numbers a process takes from the sequence at once
MODES = ("group-commit", "one-statement")
RELAY_BATCH = 500  # outbox rows the relay moves per transaction
RELAY_IDLE_S = 0.02  # its pause when it found less than a full batch
ATTEMPTS = 5  # reads and writes of a payment that keeps meeting a changed order
_SCHEMA_LOCK = 7_204_512  # advisory lock: processes starting together create the schema one at a time
SIGNED_HEADERS = ("X-Client-ID", "X-Timestamp", "X-Signature")

# Where the peer keeps the rows the service keeps, its tables take the service's columns and indexes (LIKE ...
# INCLUDING ALL), so both designs index alike. An order's `state` is its read view (actors.views.OrderView) but
# its refunds, which are rows of their own (`state_schema` keeps its default); the money columns (`amount_paid`, the
# service's too, and those added beside it) are what the statements test, and `version` counts its events. The service keeps a refund's reason and destination in its
# order's state, the peer in the refund's row.
_SCHEMA = f"""
CREATE SCHEMA IF NOT EXISTS peer;
CREATE SEQUENCE IF NOT EXISTS peer.order_numbers START 1001 INCREMENT {BLOCK};
CREATE TABLE IF NOT EXISTS peer.orders (LIKE public.orders INCLUDING ALL, amount_owed bigint NOT NULL,
    refunds_held bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS peer.checkout_sessions (LIKE public.checkout_sessions INCLUDING ALL);
CREATE TABLE IF NOT EXISTS peer.refunds (LIKE public.refunds INCLUDING ALL, reason text NOT NULL,
    refund_to_address text NOT NULL, refund_network text NOT NULL, refund_token_address text NOT NULL,
    source text NOT NULL);
CREATE TABLE IF NOT EXISTS peer.idempotency (LIKE public.idempotency_keys INCLUDING ALL);
CREATE TABLE IF NOT EXISTS peer.events (
    order_id text NOT NULL,
    seq integer NOT NULL,
    event_id text NOT NULL UNIQUE,
    type text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    created_at timestamptz NOT NULL,
    body jsonb NOT NULL,  -- the public event, as the events stream carries it
    PRIMARY KEY (order_id, seq)
);
CREATE INDEX IF NOT EXISTS events_merchant ON peer.events (merchant_id, livemode, created_at, event_id);
-- One request's events, named rather than copied: the relay reads them from the events table.
CREATE TABLE IF NOT EXISTS peer.outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id text NOT NULL,
    first_seq integer NOT NULL,
    last_seq integer NOT NULL
);
"""

_RECORDED = ("SELECT status, body, request_hash FROM peer.idempotency"
             " WHERE merchant_id = $1 AND livemode = $2 AND key = $3")
_RECORD = ("INSERT INTO peer.idempotency (merchant_id, livemode, key, request_hash, status, body)"
           " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING true")
_ORDER = "SELECT state FROM peer.orders WHERE order_id = $1 AND merchant_id = $2 AND livemode = $3"
_BALANCE = ("SELECT amount_paid, amount_paid - refunds_held AS refundable FROM peer.orders"
            " WHERE order_id = $1 AND merchant_id = $2 AND livemode = $3")
_CLAIM = """
WITH claimed AS (
    DELETE FROM peer.outbox WHERE id IN (SELECT id FROM peer.outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING id, order_id, first_seq, last_seq
)
SELECT c.id, e.body::text AS payload FROM claimed c
JOIN peer.events e ON e.order_id = c.order_id AND e.seq BETWEEN c.first_seq AND c.last_seq
ORDER BY c.id, e.seq
"""


def _statement(work: str) -> str:
    """A request's whole write. `work` is CTEs ending in `changed`: the order row the request changed, with its
    version before the request's events (seq0) and what only that row knows of them (facts, merged into each event's
    data); no row when the key was answered before or the order refused the change. Every statement's parameters:
    $1 merchant, $2 mode, $3 Idempotency-Key (NULL without), $4 request hash, $5 and $6 the answer's status and body,
    $7 the time, $8 the public events in order; its own follow from $9."""
    return f"""
WITH recorded AS ({_RECORDED}), {work}, new_events AS (
    INSERT INTO peer.events (order_id, seq, event_id, type, merchant_id, livemode, created_at, body)
    SELECT c.order_id, c.seq0 + e.n, e.body ->> 'id', e.body ->> 'type', c.merchant_id, c.livemode, $7,
           e.body || jsonb_build_object('seq', c.seq0 + e.n, 'data', (e.body -> 'data') || c.facts)
    FROM changed c, unnest($8::jsonb[]) WITH ORDINALITY AS e(body, n)
), relayed AS (
    INSERT INTO peer.outbox (order_id, first_seq, last_seq)
    SELECT order_id, seq0 + 1, seq0 + cardinality($8::jsonb[]) FROM changed
), answered AS (
    INSERT INTO peer.idempotency (merchant_id, livemode, key, request_hash, status, body)
    SELECT $1, $2, $3, $4, $5, $6 FROM changed WHERE $3::text IS NOT NULL
)
SELECT EXISTS (SELECT FROM changed) AS done, r.status, r.body, r.request_hash
FROM (VALUES (true)) AS one LEFT JOIN recorded r ON true
"""


_CREATE = _statement("""changed AS (
    INSERT INTO peer.orders (order_id, merchant_id, livemode, order_number, status, external_ref, amount_owed, version,
                             state, created_at, updated_at)
    SELECT $9, $1, $2, $10, 'PENDING', $11, $12, cardinality($8::jsonb[]), $13, $7, $7
    WHERE NOT EXISTS (SELECT FROM recorded)
    RETURNING order_id, merchant_id, livemode, 0 AS seq0, '{}'::jsonb AS facts
), new_session AS (
    INSERT INTO peer.checkout_sessions (session_id, session_key, order_id, merchant_id, livemode, status, expires_at)
    SELECT $14, $15, order_id, merchant_id, livemode, 'OPEN', $16 FROM changed
)""")

_PAY = _statement("""changed AS (
    UPDATE peer.orders SET status = $11, amount_paid = $12, version = $10 + cardinality($8::jsonb[]), state = $13,
                           updated_at = $7
    WHERE order_id = $9 AND version = $10 AND NOT EXISTS (SELECT FROM recorded)
    RETURNING order_id, merchant_id, livemode, $10 AS seq0, '{}'::jsonb AS facts
), completed AS (
    UPDATE peer.checkout_sessions SET status = 'COMPLETED' WHERE session_id = $14 AND EXISTS (SELECT FROM changed)
)""")

# The refund is held against the order only if it fits: a concurrent refund's UPDATE waits on the row and checks
# the balance again against the row the first one left.
_REFUND = _statement("""changed AS (
    UPDATE peer.orders o SET refunds_held = o.refunds_held + $10, version = o.version + cardinality($8::jsonb[]),
        updated_at = $7, state = o.state || jsonb_build_object('version', o.version + cardinality($8::jsonb[]),
                                                               'updated_at', $7::timestamptz)
    WHERE o.order_id = $9 AND o.merchant_id = $1 AND o.livemode = $2 AND o.amount_paid > 0
      AND o.amount_paid - o.refunds_held >= $10 AND NOT EXISTS (SELECT FROM recorded)
    RETURNING o.order_id, o.merchant_id, o.livemode, o.version - cardinality($8::jsonb[]) AS seq0,
              jsonb_build_object('order_number', o.order_number::text, 'order_status', o.status) AS facts
), new_refund AS (
    INSERT INTO peer.refunds (refund_id, order_id, merchant_id, livemode, status, amount, link_token, reason,
                              refund_to_address, refund_network, refund_token_address, source, created_at, updated_at)
    SELECT $11, order_id, merchant_id, livemode, 'APPROVED', $10, $12, $13, $14, $15, $16, 'merchant', $7, $7
    FROM changed
)""")


class Numbers:
    """Order numbers from the sequence, a block at a time: one nextval per hundred orders, none per order."""

    def __init__(self, pool: asyncpg.Pool):
        self.pool = pool
        self.next = self.end = 0
        self.lock = asyncio.Lock()

    async def take(self) -> int:
        while self.next == self.end:
            async with self.lock:
                if self.next == self.end:
                    first = await self.pool.fetchval("SELECT nextval('peer.order_numbers')")
                    self.next, self.end = first, first + BLOCK
        self.next += 1
        return self.next - 1


@dataclass
class Peer:
    settings: config.Settings
    pool: asyncpg.Pool
    pipeliner: Pipeliner  # signatures spent and events relayed, the concurrent ones in one Redis round trip
    keys: Keys
    vault: Vault
    numbers: Numbers
    key_cache: KeyCache = field(default_factory=KeyCache)
    batches: Batches | None = None  # in group-commit mode


@dataclass
class Batches:
    sessions: Batcher
    refunds: Batcher


PEER: web.AppKey[Peer] = web.AppKey("peer", Peer)
CALLER: web.RequestKey[ApiKey] = web.RequestKey("caller", ApiKey)


class Write(NamedTuple):
    statement: str
    answer: web.Response  # given, and recorded under the key, when the statement changes the order
    at: datetime
    events: list[str]  # the public events, as JSON
    args: tuple  # the statement's own parameters, $9 on


@web.middleware
async def signed(request: web.Request, handler):
    """The B2B request signature (web/edge/auth.py): every route of the peer is signed."""
    peer = request.app[PEER]
    public_key, timestamp, signature = (request.headers.get(name, "") for name in SIGNED_HEADERS)
    for name, value in zip(SIGNED_HEADERS, (public_key, timestamp, signature)):
        if not value:
            raise ApiError(401, "missing_header", f"The {name} header is required.", name)
    found, api_key = peer.key_cache.get(public_key)
    if not found:
        api_key = await merchants.lookup_key(peer.pool, peer.vault, public_key)
        peer.key_cache.put(public_key, api_key)
    if api_key is None:
        raise ApiError(401, "unknown_client_id", "No API key has this public key.", "X-Client-ID")
    if not timestamp.isdigit():
        raise ApiError(401, "invalid_timestamp",
                       "X-Timestamp must be an integer Unix time in seconds (or milliseconds).", "X-Timestamp")
    seconds = int(timestamp) // (1000 if int(timestamp) >= MILLISECONDS_FROM else 1)
    if abs(time.time() - seconds) > peer.settings.signature_tolerance_s:
        raise ApiError(401, "timestamp_out_of_tolerance", "X-Timestamp is not within the accepted tolerance.",
                       "X-Timestamp")
    if not matches(api_key.secret, request.method, request.raw_path, timestamp, await request.read(), signature):
        raise ApiError(401, "invalid_signature", "X-Signature does not match the request signed with the secret key.",
                       "X-Signature")
    request[CALLER] = api_key
    return await handler(request)


def _recorded(row, digest: str) -> web.Response:
    if row["request_hash"] != digest:
        raise ApiError(409, "idempotency_key_reused",
                       "This Idempotency-Key was already used with a different request.", "Idempotency-Key")
    return web.Response(body=bytes(row["body"]), status=row["status"], content_type="application/json")


async def _spend(request: web.Request) -> web.Response | None:
    """None for a signature seen the first time; a repeat is answered by _repeat."""
    peer, api_key, key = request.app[PEER], request[CALLER], idempotency_key(request)
    seen = peer.keys.signature_seen(request.headers["X-Signature"])
    if await peer.pipeliner.call("SET", seen, 1, "NX", "EX", replay_ttl(peer.settings)):
        return None
    return await _repeat(peer, api_key.merchant_id, api_key.livemode, key,
                         request_hash(request.method, request.path, await request.read()))


async def _repeat(peer: Peer, merchant_id: str, livemode: bool, key: str | None, digest: str) -> web.Response:
    """A spent signature's answer: what its Idempotency-Key recorded, if it has one and anything was
    (web/edge/auth.py)."""
    row = key and await peer.pool.fetchrow(_RECORDED, merchant_id, livemode, key)
    if not row:
        raise replayed()
    return _recorded(row, digest)


async def _spend_batch(peer: Peer, batch: list[Entry]) -> list[bool]:
    ttl = replay_ttl(peer.settings)
    return await peer.pipeliner.call_many([("SET", peer.keys.signature_seen(e.signature), 1, "NX", "EX", ttl)
                                           for e in batch])


async def _batched(request: web.Request, batcher: Batcher, write) -> web.Response:
    """The request's answer once its batch committed (group-commit mode)."""
    api_key = request[CALLER]
    return await batcher.submit(Entry(api_key.merchant_id, api_key.livemode, idempotency_key(request),
                                      request_hash(request.method, request.path, await request.read()),
                                      request.headers["X-Signature"], write))


async def _commit(request: web.Request, write: Write) -> web.Response | None:
    """The write's answer, the answer its key recorded before, or None when the order refused the change."""
    peer, api_key, key = request.app[PEER], request[CALLER], idempotency_key(request)
    digest = request_hash(request.method, request.path, await request.read())
    try:
        row = await peer.pool.fetchrow(write.statement, api_key.merchant_id, api_key.livemode, key, digest,
                                       write.answer.status, write.answer.body, write.at, write.events, *write.args)
    except asyncpg.UniqueViolationError as exc:
        if exc.constraint_name != "idempotency_pkey":
            raise
        # The same key's first request committed while this one ran: its answer is the key's.
        row = await peer.pool.fetchrow(_RECORDED, api_key.merchant_id, api_key.livemode, key)
    if row["status"] is not None:
        return _recorded(row, digest)
    return write.answer if row["done"] else None


async def _refuse(request: web.Request, refusal: ApiError) -> web.Response:
    """A refusal of the order's, recorded under the request's key as an answer is."""
    peer, api_key, key = request.app[PEER], request[CALLER], idempotency_key(request)
    response = refusal.response()
    digest = request_hash(request.method, request.path, await request.read())
    if key is not None and not await peer.pool.fetchval(_RECORD, api_key.merchant_id, api_key.livemode, key, digest,
                                                        response.status, response.body):
        return _recorded(await peer.pool.fetchrow(_RECORDED, api_key.merchant_id, api_key.livemode, key), digest)
    return response


def _event(api_key: ApiKey, order_id: str, seq: int, kind: str, data, at: datetime) -> str:
    return _encode(PublicEvent(id=random_id("evt"), type=kind, created_at=iso(at), livemode=api_key.livemode,
                               data=data, merchant_id=api_key.merchant_id, order_id=order_id, seq=seq)).decode()


def _order(view: OrderView, status: OrderStatus) -> dict:
    """What every event's data says of its order: the status is the order's right after the event."""
    return dict(order_id=view.order_id, order_number=str(view.order_number), order_status=status.value)


async def quick_session(request: web.Request) -> web.Response:
    peer, api_key = request.app[PEER], request[CALLER]
    order_in = decode(await request.read(), bodies.QuickSessionIn)
    if order_in.amount is None or order_in.line_items is not None or order_in.items is not None:
        raise ApiError(422, "not_served_by_peer", "The peer takes `amount`, not line items.", "amount")
    owed = amount(order_in.amount, "amount")
    if peer.batches is None and (repeat := await _spend(request)) is not None:
        return repeat
    now, mode = utcnow(), "live" if api_key.livemode else "test"
    session = SessionView(session_id=random_id("cs"), session_key=random_id(f"cs_{mode}", 24), amount_due=owed,
                          created_at=now, success_url=order_in.success_url, cancel_url=order_in.cancel_url,
                          expires_at=now + timedelta(seconds=order_in.ttl_seconds or peer.settings.session_ttl_s))
    view = OrderView(order_id=random_id("ord"), merchant_id=api_key.merchant_id, livemode=api_key.livemode,
                     order_number=await peer.numbers.take(), amount_owed=owed, created_at=now, updated_at=now,
                     external_ref=order_in.external_ref, metadata=order_in.metadata or {}, sessions=(session,),
                     version=2)
    o = _order(view, view.status)
    events = [
        _event(api_key, view.order_id, 1, "order.created",
               ev.OrderCreated(**o, amount=money.format(owed), line_items=[], metadata=dict(view.metadata)), now),
        _event(api_key, view.order_id, 2, "checkout_session.created",
               ev.SessionCreated(**o, amount_due=money.format(owed), session_id=session.session_id,
                                 session_key=session.session_key, expires_at=iso(session.expires_at),
                                 success_url=session.success_url, cancel_url=session.cancel_url), now),
    ]
    answer = respond(session_created_json(peer.settings, view), status=201)
    if peer.batches is not None:
        return await _batched(request, peer.batches.sessions, group_commit.Session(
            view.order_id, view.order_number, view.external_ref, owed, _encode(view).decode(), session.session_id,
            session.session_key, session.expires_at, now, events, answer))
    return await _commit(request, Write(_CREATE, answer, now, events, (
        view.order_id, view.order_number, view.external_ref, owed, _encode(view).decode(), session.session_id,
        session.session_key, session.expires_at)))


PAYABLE = (OrderStatus.PENDING, OrderStatus.PARTIAL_PAID)


def _pay(view: OrderView, payment: PaymentView, at: datetime) -> tuple[OrderView, str | None, list[tuple[str, object]]]:
    """The order after a confirmed transfer, the session it completes and its events (type, data), by the service's
    rule (actors/order.py) for the orders the peer makes, which are never canceled nor refunded on chain."""
    live = view.live_session()
    payment = replace(payment, session_id=live.session_id if live else None)
    paid, status, completed = view.amount_paid + payment.amount, view.status, None
    events: list[tuple[str, object]] = [("payment.received", ev.PaymentReceived(
        **_order(view, status), payment_id=payment.payment_id, network=payment.network, tx_hash=payment.tx_hash,
        token_address=payment.token_address, amount=money.format(payment.amount), session_id=payment.session_id,
        late=False))]
    if status in PAYABLE and paid >= view.amount_owed:
        if live is not None:
            completed = live.session_id
            events.append(("checkout_session.completed",
                           ev.SessionChanged(**_order(view, status), session_id=completed)))
        status = OrderStatus.PAID
        events.append(("payment.settled", ev.OrderSettled(**_order(view, status), amount_paid=money.format(paid))))
    elif status in PAYABLE:
        status = OrderStatus.PARTIAL_PAID
        events.append(("order.partially_paid", ev.OrderPartiallyPaid(
            **_order(view, status), amount_paid=money.format(paid), amount_due=money.format(view.amount_owed - paid))))
    sessions = tuple(replace(s, status=SessionStatus.COMPLETED) if s.session_id == completed else s
                     for s in view.sessions)
    after = replace(view, status=status, amount_paid=paid, payments=view.payments + (payment,), sessions=sessions,
                    version=view.version + len(events), updated_at=at)
    return after, completed, events


async def _view(request: web.Request, order_id: str) -> OrderView:
    peer, api_key = request.app[PEER], request[CALLER]
    state = await peer.pool.fetchval(_ORDER, order_id, api_key.merchant_id, api_key.livemode)
    if state is None:
        raise missing("order")
    return decode_view(state)


async def record_payment(request: web.Request) -> web.Response:
    peer, api_key = request.app[PEER], request[CALLER]
    if api_key.livemode:
        raise ApiError(403, "test_mode_only", "Test helpers work with test keys only.")
    payment_in = decode(await request.read(), bodies.TestPaymentIn)
    paid = amount(payment_in.amount, "amount")
    if (repeat := await _spend(request)) is not None:
        return repeat
    order_id, now = request.match_info["order_id"], utcnow()
    payment = PaymentView(payment_id=random_id("pay"), network=payment_in.network, amount=paid, received_at=now,
                          tx_hash=payment_in.tx_hash or random_id("test", 16), token_address=payment_in.token_address)
    for _ in range(ATTEMPTS):
        view = await _view(request, order_id)
        if any((p.network, p.tx_hash) == (payment.network, payment.tx_hash) for p in view.payments):
            return respond(order_json(peer.settings, view), status=201)  # a second report of one transfer
        after, completed, happened = _pay(view, payment, now)
        events = [_event(api_key, order_id, view.version + n, kind, data, now)
                  for n, (kind, data) in enumerate(happened, 1)]
        answer = respond(order_json(peer.settings, after), status=201)
        done = await _commit(request, Write(_PAY, answer, now, events, (
            order_id, view.version, after.status.value, after.amount_paid, _encode(after).decode(), completed)))
        if done is not None:
            return done
    raise ApiError(503, "command_failed", "The order kept changing while this payment was recorded; retry it.")


async def create_refund(request: web.Request) -> web.Response:
    peer, api_key = request.app[PEER], request[CALLER]
    if request.match_info["merchant_id"] != api_key.merchant_id:
        raise ApiError(403, "merchant_mismatch", "This API key does not belong to that merchant.", "merchant_id")
    refund_in = decode(await request.read(), bodies.RefundIn)
    cents = amount(refund_in.amount, "amount")
    if refund_in.refund_network is None or refund_in.refund_token_address is None:
        raise ApiError(422, "not_served_by_peer", "The peer takes `refund_network` and `refund_token_address`.",
                       "refund_network")
    to = refund_destination(refund_in.refund_to_address, refund_in.refund_network, refund_in.refund_token_address,
                            api_key.livemode)
    if peer.batches is None and (repeat := await _spend(request)) is not None:
        return repeat
    now, order_id = utcnow(), refund_in.order_id
    refund = RefundView(refund_id=random_id("re"), link_token=random_id("rl", 16), amount=cents,
                        reason=refund_in.reason, refund_to_address=to.refund_to_address,
                        refund_network=to.refund_network, refund_token_address=to.refund_token_address,
                        source="merchant", created_at=now, updated_at=now, status=RefundStatus.APPROVED)
    # refund_json reads only the order's id and mode of the order it is given.
    owner = OrderView(order_id=order_id, merchant_id=api_key.merchant_id, livemode=api_key.livemode, order_number=0,
                      amount_owed=0, created_at=now, updated_at=now)
    answer = respond(refund_json(peer.settings, owner, refund), status=201)
    if peer.batches is not None:  # decided against the order's row in the batch (bench/group_commit.py)
        return await _batched(request, peer.batches.refunds, group_commit.Refund(
            order_id, refund, answer, partial(_event, api_key, order_id, at=now)))
    # The statement fills in the order's number and status, and the events' seq, from the order's row.
    fields = dict(order_id=order_id, order_number="", order_status="", refund_id=refund.refund_id,
                  amount=money.format(cents), reason=refund.reason, refund_to_address=refund.refund_to_address,
                  refund_network=refund.refund_network, refund_token_address=refund.refund_token_address,
                  link_token=refund.link_token)
    requested = ev.RefundRequested(**fields, refund_status="PENDING", source="merchant", note=None, token=None)
    events = [_event(api_key, order_id, 0, "payment.refund.requested", requested, now),
              _event(api_key, order_id, 0, "payment.refund.approved",
                     ev.RefundChanged(**fields, refund_status="APPROVED"), now)]
    done = await _commit(request, Write(_REFUND, answer, now, events, (
        order_id, cents, refund.refund_id, refund.link_token, refund.reason, refund.refund_to_address,
        refund.refund_network, refund.refund_token_address)))
    if done is not None:
        return done
    balance = await peer.pool.fetchrow(_BALANCE, order_id, api_key.merchant_id, api_key.livemode)
    if balance is None:
        return await _refuse(request, missing("order"))
    if balance["amount_paid"] == 0:
        return await _refuse(request, ApiError(
            409, "order_not_paid", "This order has received no payment, so nothing can be refunded.", "order_id"))
    return await _refuse(request, ApiError(
        409, "amount_exceeds_refundable",
        f"amount {money.format(cents)} is above the refundable balance {money.format(max(balance['refundable'], 0))}.",
        "amount"))


async def get_order(request: web.Request) -> web.Response:
    return respond(order_json(request.app[PEER].settings, await _view(request, request.match_info["order_id"])))


async def _relay(peer: Peer) -> None:
    """Outbox rows onto the events stream, a batch per transaction: deleted as they are claimed, kept if the XADDs
    fail (the transaction rolls back), so each event reaches the stream at least once. The relays of several
    processes skip each other's rows; each request's events go out in seq order, and each carries its seq."""
    while True:
        try:
            async with peer.pool.acquire() as conn, conn.transaction():
                claimed = await conn.fetch(_CLAIM, RELAY_BATCH)
                if claimed:
                    await peer.pipeliner.call_many([("XADD", peer.keys.events, "*", "e", row["payload"])
                                                    for row in claimed])
        except Exception as exc:  # noqa: BLE001 - a turn that fails for any reason is reported and tried again
            faults.report(log, "the outbox relay", exc, "trying again")
            claimed = []  # rolled back: they wait for the next turn, after the pause
        if len({row["id"] for row in claimed}) < RELAY_BATCH:
            await asyncio.sleep(RELAY_IDLE_S)


async def _create_schema(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", _SCHEMA_LOCK)
        await conn.execute(_SCHEMA)
    finally:
        await conn.close()  # which releases the lock


def _batches(peer: Peer, window_s: float, size: int) -> Batches:
    def batcher(write) -> Batcher:
        return Batcher(window_s, size, lambda batch: group_commit.flushed(
            batch, partial(_spend_batch, peer), lambda e: _repeat(peer, e.merchant_id, e.livemode, e.key, e.digest),
            partial(write, peer.pool)))

    return Batches(batcher(group_commit.write_sessions), batcher(group_commit.write_refunds))


def init_peer(settings: config.Settings, pool_size: int, mode: str = MODES[0], window_ms: float = 2.0,
              batch_size: int = 64) -> web.Application:
    app = web.Application(middlewares=[error_middleware, signed], client_max_size=settings.max_body_bytes)

    async def resources(app: web.Application):
        await _create_schema(settings.database_url)
        async with lifecycle.opened(settings, pool_min=pool_size, pool_max=pool_size,
                                 server_settings=db.ACTOR_SETTINGS) as wired:
            peer = Peer(settings, wired.pool, Pipeliner(wired.redis), wired.keys, wired.vault, Numbers(wired.pool))
            if mode == "group-commit":
                peer.batches = _batches(peer, window_ms / 1000, batch_size)
            app[PEER] = peer
            relay = asyncio.create_task(_relay(peer))
            yield
            relay.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relay
            if peer.batches is not None:
                await peer.batches.sessions.stop()
                await peer.batches.refunds.stop()
            await peer.pipeliner.stop()

    app.cleanup_ctx.append(resources)
    app.router.add_post(PREFIX + "/checkout-sessions/quick", quick_session)
    app.router.add_post(PREFIX + "/test-helpers/orders/{order_id}/payments", record_payment)
    app.router.add_post(PREFIX + "/merchants/{merchant_id}/refunds", create_refund)
    app.router.add_get(PREFIX + "/orders/{order_id}", get_order)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--pool", type=int, default=int(os.environ.get("PEER_POOL", "8")),
                        help="PostgreSQL connections of the process (its relay's among them)")
    parser.add_argument("--mode", choices=MODES, default=MODES[0],
                        help="writes committed in groups per process, or one statement per request")
    parser.add_argument("--window-ms", type=float, default=2.0,
                        help="group commit: how long a batch gathers the requests that arrive")
    parser.add_argument("--batch-size", type=int, default=64, help="group commit: the most requests in one batch")
    args = parser.parse_args()
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "WARNING"))
    settings = config.load(port=args.port)
    # On uvloop, as the service's processes are (service/processes.py).
    web.run_app(init_peer(settings, args.pool, args.mode, args.window_ms, args.batch_size), host="127.0.0.1", port=args.port, print=None, reuse_port=True,
                access_log=None, loop=uvloop.new_event_loop())


if __name__ == "__main__":
    main()
