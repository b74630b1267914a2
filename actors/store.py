"""PostgreSQL side of the actors: load state, and commit a batch in one transaction.

A batch writes, together or not at all: the events, the orders and sessions read tables,
one dedupe row per command and the outbox rows the relay publishes.
"""

from __future__ import annotations

from datetime import datetime

import asyncpg
import msgspec

from actors import messages as m
from actors.order import Order
from actors.publication import PublicEvent

_encode = msgspec.json.Encoder().encode
_decode_order = msgspec.json.Decoder(Order).decode
_decode_event = msgspec.json.Decoder(m.Event).decode


class Recorded(msgspec.Struct, frozen=True):
    request_hash: str
    reply: bytes


class Appended(msgspec.Struct, frozen=True):
    event_id: str
    seq: int
    event: m.Event
    public: PublicEvent
    payload: bytes  # `public` as JSON, encoded once for the outbox and the events stream


class Outcome(msgspec.Struct, frozen=True):
    """What one command did: the reply it earned and the events it appended."""

    command_id: str
    order_id: str
    request_hash: str
    reply: bytes
    appended: tuple[Appended, ...] = ()


class Wanted(msgspec.Struct, frozen=True):
    """What a batch needs before its commands can be decided."""

    command_ids: list[str]
    order_ids: list[str]  # orders the worker does not hold in memory
    creations: list[tuple[str, str, bool]]  # (command_id, merchant_id, livemode) of orders needing a number


class Prepared(msgspec.Struct):
    recorded: dict[str, Recorded]
    orders: dict[str, Order]
    # The order numbers handed to this batch, per (merchant_id, livemode): first and last, inclusive.
    numbers: dict[tuple[str, bool], tuple[int, int]]


FIRST_ORDER_NUMBER = 1001

# Numbers are handed out here, outside the batch's transaction, so that concurrent workers never wait on
# each other's commits; a number whose order is refused, or whose batch fails, stays unused.
_PREPARE = """
WITH wanted AS (
    SELECT merchant_id, livemode, count(*) AS n
    FROM unnest($3::text[], $4::text[], $5::bool[]) AS w(command_id, merchant_id, livemode)
    WHERE NOT EXISTS (SELECT 1 FROM commands c WHERE c.command_id = w.command_id)
    GROUP BY merchant_id, livemode
), numbered AS (
    -- A merchant's first numbers are $6 .. $6 + n - 1; later ones follow its last. The inserted `last`
    -- carries n on top of $6 - 1, which is how the conflict branch gets n back.
    INSERT INTO order_numbers AS o (merchant_id, livemode, last)
    SELECT merchant_id, livemode, $6::bigint - 1 + n FROM wanted
    ON CONFLICT (merchant_id, livemode) DO UPDATE SET last = o.last + (excluded.last - ($6::bigint - 1))
    RETURNING merchant_id, livemode, last
)
SELECT 'command' AS kind, command_id AS id, request_hash, reply, NULL::jsonb AS state, NULL::bool AS livemode,
       NULL::bigint AS first, NULL::bigint AS last
FROM commands WHERE command_id = ANY($1)
UNION ALL SELECT 'order', order_id, NULL, NULL, state, NULL, NULL, NULL FROM orders WHERE order_id = ANY($2)
UNION ALL SELECT 'numbers', merchant_id, NULL, NULL, NULL, livemode, last - n + 1, last
FROM numbered JOIN wanted USING (merchant_id, livemode)
"""


async def prepare(conn: asyncpg.Connection, wanted: Wanted) -> Prepared:
    """The recorded answers of these commands, the stored state of these orders and the order numbers
    the new orders need, in one round trip."""
    creations = _columns(wanted.creations, 3)
    rows = await conn.fetch(_PREPARE, wanted.command_ids, wanted.order_ids, *creations, FIRST_ORDER_NUMBER)
    prepared = Prepared({}, {}, {})
    for r in rows:
        if r["kind"] == "command":
            prepared.recorded[r["id"]] = Recorded(r["request_hash"], bytes(r["reply"]))
        elif r["kind"] == "order":
            prepared.orders[r["id"]] = _decode_order(r["state"])
        else:
            prepared.numbers[(r["id"], r["livemode"])] = (r["first"], r["last"])
    return prepared


# One statement writes the whole batch (one round trip, atomic on its own), each table fed by
# unnest() over parallel arrays.
_COMMIT = """
WITH new_events AS (
    INSERT INTO events (event_id, order_id, seq, type, merchant_id, livemode, data, created_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bool[], $7::jsonb[],
                         $8::timestamptz[])
), new_outbox AS (
    INSERT INTO outbox (batch_id, payloads) SELECT $1[1], $9::bytea[] WHERE cardinality($9::bytea[]) > 0
), published AS (
    DELETE FROM outbox WHERE batch_id = ANY($52::text[])
), saved_orders AS (
    INSERT INTO orders (order_id, merchant_id, livemode, order_number, status, external_ref, state, version,
                        created_at, updated_at)
    SELECT * FROM unnest($10::text[], $11::text[], $12::bool[], $13::bigint[], $14::text[], $15::text[],
                         $16::jsonb[], $17::int[], $18::timestamptz[], $19::timestamptz[])
    ON CONFLICT (order_id) DO UPDATE SET status = excluded.status, state = excluded.state,
        version = excluded.version, updated_at = excluded.updated_at
), saved_sessions AS (
    INSERT INTO checkout_sessions (session_id, session_key, order_id, merchant_id, livemode, status, expires_at)
    SELECT * FROM unnest($20::text[], $21::text[], $22::text[], $23::text[], $24::bool[], $25::text[],
                         $26::timestamptz[])
    ON CONFLICT (session_id) DO UPDATE SET status = excluded.status
), saved_refunds AS (
    INSERT INTO refunds (refund_id, order_id, merchant_id, livemode, status, amount, link_token, created_at,
                         updated_at)
    SELECT * FROM unnest($31::text[], $32::text[], $33::text[], $34::bool[], $35::text[], $36::bigint[],
                         $37::text[], $38::timestamptz[], $39::timestamptz[])
    ON CONFLICT (refund_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
), saved_tokens AS (
    INSERT INTO refund_tokens (token, order_id, merchant_id, livemode, status, expires_at, created_at)
    SELECT * FROM unnest($40::text[], $41::text[], $42::text[], $43::bool[], $44::text[], $45::timestamptz[],
                         $46::timestamptz[])
    ON CONFLICT (token) DO UPDATE SET status = excluded.status
), verdicts AS (
    UPDATE refund_transactions t SET status = v.status, reason = v.reason
    FROM unnest($47::text[], $48::text[], $49::text[], $50::text[], $51::text[]) AS v(network, tx_hash, refund_id,
                                                                                     status, reason)
    WHERE t.network = v.network AND t.tx_hash = v.tx_hash AND t.refund_id = v.refund_id
)
INSERT INTO commands (command_id, order_id, request_hash, reply)
SELECT * FROM unnest($27::text[], $28::text[], $29::text[], $30::bytea[])
"""


def _columns(rows: list[tuple], width: int) -> list[list]:
    return [list(column) for column in zip(*rows)] if rows else [[] for _ in range(width)]


async def commit(conn: asyncpg.Connection, outcomes: list[Outcome], orders: dict[str, Order],
                 encoded: dict[str, bytes], published: list[str]) -> None:
    """Write a batch in one statement, atomic on its own. `encoded` is each order as JSON;
    `published` names earlier batches whose events are on the stream now, so their outbox rows go."""
    appended = [a for o in outcomes for a in o.appended]
    events = [
        (a.event_id, a.public.order_id, a.seq, a.public.type, a.public.merchant_id, a.public.livemode,
         _encode(a.event).decode(), a.event.at, a.payload)
        for a in appended
    ]
    saved = [
        (o.order_id, o.merchant_id, o.livemode, o.order_number, o.status.value, o.external_ref,
         encoded[o.order_id].decode(), o.version, o.created_at, o.updated_at)
        for o in orders.values()
    ]
    sessions = [
        (s.session_id, s.session_key, o.order_id, o.merchant_id, o.livemode, s.status.value, s.expires_at)
        for o in orders.values()
        for s in o.sessions
    ]
    commands = [(o.command_id, o.order_id, o.request_hash, o.reply) for o in outcomes]
    refunds = [
        (r.refund_id, o.order_id, o.merchant_id, o.livemode, r.status.value, r.amount, r.link_token, r.created_at,
         r.updated_at)
        for o in orders.values()
        for r in o.refunds
    ]
    tokens = [
        (t.token, o.order_id, o.merchant_id, o.livemode, t.status.value, t.expires_at, t.created_at)
        for o in orders.values()
        for t in o.tokens
    ]
    # The web layer claims (network, tx_hash) rows at submit-tx; the actor records verdicts on its claims.
    verdicts = [
        (a.network, a.tx_hash, r.refund_id, a.status, a.reason)
        for o in orders.values()
        for r in o.refunds
        for a in r.attempts
        if a.status != "verifying"
    ]
    await conn.execute(
        _COMMIT, *_columns(events, 9), *_columns(saved, 10), *_columns(sessions, 7), *_columns(commands, 4),
        *_columns(refunds, 9), *_columns(tokens, 7), *_columns(verdicts, 5), published,
    )


async def history(conn: asyncpg.Connection, order_id: str) -> list[m.Event]:
    rows = await conn.fetch("SELECT data FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    return [_decode_event(r["data"]) for r in rows]


async def pending_outbox(conn: asyncpg.Connection, older_than: datetime, limit: int) -> list[tuple[str, list[bytes]]]:
    """Batches committed before `older_than` whose events may not have reached the stream."""
    rows = await conn.fetch(
        "SELECT batch_id, payloads FROM outbox WHERE created_at < $1 ORDER BY created_at LIMIT $2"
        " FOR UPDATE SKIP LOCKED",
        older_than,
        limit,
    )
    return [(r["batch_id"], [bytes(p) for p in r["payloads"]]) for r in rows]


async def drop_outbox(conn: asyncpg.Connection, batch_ids: list[str]) -> None:
    await conn.execute("DELETE FROM outbox WHERE batch_id = ANY($1)", batch_ids)
