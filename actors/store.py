"""PostgreSQL side of the actors: load state, and commit a batch in one statement.

A batch writes, together or not at all, and only under its partitions' newest lease epochs (actors/fencing.py): the
events, the orders and sessions read tables, one dedupe row per command and the outbox rows the relay publishes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from operator import attrgetter
from typing import Annotated, NamedTuple

import asyncpg
import msgspec

from actors import history as recorded
from actors import messages as m
from actors import schema
from actors.fencing import FenceRow, fence, refusal
from actors.order import Order
from actors.outcomes import Appended, Outcome, Prepared, Recorded, Wanted
from actors.row_arrays import Arrays, names
from actors.state import Refund, RefundToken, Session, TxAttempt

_encode = msgspec.json.Encoder().encode


FIRST_ORDER_NUMBER = 1001

# Numbers are handed out here, outside the batch's transaction, so that concurrent workers never wait on
# each other's commits; the worker holds those its batch does not use (actors/numbers.py).
_PREPARE = """
WITH wanted AS (
    SELECT merchant_id, livemode, count(*) + max(extra) AS n
    FROM unnest($3::text[], $4::text[], $5::bool[], $9::int[]) AS w(command_id, merchant_id, livemode, extra)
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
SELECT 'command' AS kind, command_id AS id, request_hash, reply, NULL::jsonb AS state, NULL::int AS schema,
       NULL::bool AS livemode, NULL::bigint AS first, version::bigint AS last
FROM commands WHERE command_id = ANY($1)
-- A recorded answer that names its order's version: the events up to it, to rebuild the view it answered with.
UNION ALL SELECT 'past', c.command_id, NULL, NULL, e.data, e.schema, NULL, e.seq, NULL
FROM commands c JOIN events e ON e.order_id = c.order_id AND e.seq <= c.version WHERE c.command_id = ANY($1)
UNION ALL SELECT 'order', order_id, NULL, NULL, state, state_schema, NULL, NULL, NULL FROM orders WHERE order_id = ANY($2)
UNION ALL SELECT 'numbers', merchant_id, NULL, NULL, NULL, NULL, livemode, last - n + 1, last
FROM numbered JOIN wanted USING (merchant_id, livemode)
UNION ALL SELECT 'claim', t.refund_id, t.network || ' ' || t.tx_hash, NULL, NULL, NULL, NULL, NULL, NULL
FROM refund_transactions t JOIN unnest($7::text[], $8::text[]) AS p(network, tx_hash) USING (network, tx_hash)
"""


async def prepare(conn: asyncpg.Connection, wanted: Wanted) -> Prepared:
    """The recorded answers of these commands (with the events that rebuild the views they answered), the stored
    state of these orders and the order numbers the new orders need, in one round trip."""
    command_ids, merchant_ids, modes, extras = _columns(wanted.creations, 4)
    transfers = _columns(wanted.transfers, 2)
    rows = await conn.fetch(_PREPARE, wanted.command_ids, wanted.order_ids, command_ids, merchant_ids, modes,
                            FIRST_ORDER_NUMBER, *transfers, extras)
    prepared = Prepared({}, {}, {}, {})
    commands, past = [], {}
    for r in rows:
        if r["kind"] == "command":
            commands.append(r)
        elif r["kind"] == "past":
            past.setdefault(r["id"], []).append((r["first"], schema.event(r["state"], r["schema"])))
        elif r["kind"] == "order":
            prepared.orders[r["id"]] = schema.snapshot(r["state"], r["schema"])
        elif r["kind"] == "claim":
            network, tx_hash = r["request_hash"].split(" ")  # neither holds a space
            prepared.claims[(network, tx_hash)] = r["id"]
        else:
            prepared.numbers[(r["id"], r["livemode"])] = (r["first"], r["last"])
    for r in commands:
        history = tuple(event for _seq, event in sorted(past.get(r["id"], ()), key=lambda pair: pair[0]))
        prepared.recorded[r["id"]] = Recorded(r["request_hash"], bytes(r["reply"]), r["last"] or 0, history)
    return prepared


# The rows a batch writes, one type per table; each column is named once, here, with its PostgreSQL type.
class EventRow(NamedTuple):
    event_id: Annotated[str, "text"]
    order_id: Annotated[str, "text"]
    seq: Annotated[int, "int"]
    type: Annotated[str, "text"]
    merchant_id: Annotated[str, "text"]
    livemode: Annotated[bool, "bool"]
    data: Annotated[str, "jsonb"]
    created_at: Annotated[datetime, "timestamptz"]
    public: Annotated[bytes, "bytea"]  # as published: the events API serves these bytes
    schema: Annotated[int, "smallint"]  # of `data`


class OutboxRow(NamedTuple):
    batch_id: Annotated[str, "text"]  # the batch's first event
    event_ids: Annotated[str, "text"]  # the batch's events in order, separated by spaces (an id holds none)


class PublishedRow(NamedTuple):
    batch_id: Annotated[str, "text"]  # an earlier batch whose events are on the stream now


class OrderRow(NamedTuple):
    order_id: Annotated[str, "text"]
    merchant_id: Annotated[str, "text"]
    livemode: Annotated[bool, "bool"]
    order_number: Annotated[int, "bigint"]
    status: Annotated[str, "text"]
    external_ref: Annotated[str | None, "text"]
    state: Annotated[str, "jsonb"]  # readers map it to actors.views.OrderView
    state_schema: Annotated[int, "smallint"]
    version: Annotated[int, "int"]
    created_at: Annotated[datetime, "timestamptz"]
    updated_at: Annotated[datetime, "timestamptz"]
    paid_at: Annotated[datetime | None, "timestamptz"]  # set by the batch that made it PAID, then kept
    amount_paid: Annotated[int, "bigint"]  # the state's, for readers that sum it
    customer_email: Annotated[str | None, "text"]  # the state's, for readers that select by it


class OrderUpdate(OrderRow):
    """An order the batch found committed: its row is updated. A new one is inserted as an OrderRow, with no
    ON CONFLICT: its speculative insertion and confirmation cost WAL and a second index probe, and a new order that
    exists after all (a retry decided with nothing read) fails the commit on its key, to be decided again."""


class SessionRow(NamedTuple):
    session_id: Annotated[str, "text"]
    session_key: Annotated[str, "text"]
    order_id: Annotated[str, "text"]
    merchant_id: Annotated[str, "text"]
    livemode: Annotated[bool, "bool"]
    status: Annotated[str, "text"]
    expires_at: Annotated[datetime, "timestamptz"]


class SessionUpdate(SessionRow):
    """A session the batch found committed, whose status changed."""


class RefundRow(NamedTuple):
    refund_id: Annotated[str, "text"]
    order_id: Annotated[str, "text"]
    merchant_id: Annotated[str, "text"]
    livemode: Annotated[bool, "bool"]
    status: Annotated[str, "text"]
    amount: Annotated[int, "bigint"]
    link_token: Annotated[str, "text"]
    created_at: Annotated[datetime, "timestamptz"]
    updated_at: Annotated[datetime, "timestamptz"]
    awaits_provider: Annotated[bool, "bool"]  # the card refund sender's work list


class RefundUpdate(RefundRow):
    """A refund the batch found committed, whose row changed."""


class TokenRow(NamedTuple):
    token: Annotated[str, "text"]
    order_id: Annotated[str, "text"]
    merchant_id: Annotated[str, "text"]
    livemode: Annotated[bool, "bool"]
    status: Annotated[str, "text"]
    expires_at: Annotated[datetime, "timestamptz"]
    created_at: Annotated[datetime, "timestamptz"]


class TokenUpdate(TokenRow):
    """A refund-request token the batch found committed, whose status changed."""


class TransferRow(NamedTuple):
    network: Annotated[str, "text"]
    tx_hash: Annotated[str, "text"]
    refund_id: Annotated[str, "text"]
    order_id: Annotated[str, "text"]
    merchant_id: Annotated[str, "text"]
    livemode: Annotated[bool, "bool"]
    token_address: Annotated[str, "text"]
    to_address: Annotated[str, "text"]
    amount: Annotated[int, "bigint"]
    status: Annotated[str, "text"]
    reason: Annotated[str | None, "text"]
    submitted_at: Annotated[datetime, "timestamptz"]


class CommandRow(NamedTuple):
    command_id: Annotated[str, "text"]
    order_id: Annotated[str, "text"]
    request_hash: Annotated[str, "text"]
    reply: Annotated[bytes, "bytea"]
    kind: Annotated[str, "text"]  # the command's tag
    at: Annotated[datetime | None, "timestamptz"]  # the time the command carried
    version: Annotated[int | None, "int"]  # of the order whose view the reply answered, which it does not copy


_ARRAYS = Arrays()
_PUBLISHED = _ARRAYS.add(PublishedRow)
_FENCE = fence(_ARRAYS)
# One statement writes the whole batch, or the batches of several lanes (one round trip, atomic on its own), each
# table fed by unnest() over one array per column. Its head is the fence (actors/fencing.py): the rows of the
# partitions it writes for, updated where they still hold its epochs, and a guard (migration 034) that fails the
# statement unless every partition was confirmed. The guard names no column of the commands it gates, so PostgreSQL
# evaluates it once, before the first row is written, even for a batch of no command. Each batch's outbox row is named
# by its first event and names its events, in order: their public bytes are in `events` by the same commit (copied
# into the outbox too, they were 3 % of the WAL of a keyed quick session in large batches, compressed in TOAST, and
# 13 % in small ones). A lane deletes its batch's row once that batch's events are on the stream, so the rows stay
# one per batch.
_COMMIT = f"""
WITH {_FENCE.cte}, new_events AS (
    INSERT INTO events ({names(EventRow)}) SELECT * FROM {_ARRAYS.unnest(EventRow)}
), new_outbox AS (
    INSERT INTO outbox (batch_id, event_ids) SELECT batch_id, string_to_array(event_ids, ' ')
    FROM {_ARRAYS.unnest(OutboxRow)}
), published AS (
    DELETE FROM outbox WHERE batch_id = ANY({_PUBLISHED["batch_id"]})
), new_orders AS (
    INSERT INTO orders ({names(OrderRow)}) SELECT * FROM {_ARRAYS.unnest(OrderRow)}
), saved_orders AS (
    UPDATE orders SET status = u.status, state = u.state, state_schema = u.state_schema, version = u.version,
        updated_at = u.updated_at, paid_at = coalesce(orders.paid_at, u.paid_at), amount_paid = u.amount_paid,
        customer_email = u.customer_email
    FROM {_ARRAYS.unnest(OrderUpdate, "u")} WHERE orders.order_id = u.order_id
), new_sessions AS (
    INSERT INTO checkout_sessions ({names(SessionRow)}) SELECT * FROM {_ARRAYS.unnest(SessionRow)}
), saved_sessions AS (
    UPDATE checkout_sessions SET status = u.status
    FROM {_ARRAYS.unnest(SessionUpdate, "u")} WHERE checkout_sessions.session_id = u.session_id
), new_refunds AS (
    INSERT INTO refunds ({names(RefundRow)}) SELECT * FROM {_ARRAYS.unnest(RefundRow)}
), saved_refunds AS (
    UPDATE refunds SET status = u.status, updated_at = u.updated_at, awaits_provider = u.awaits_provider
    FROM {_ARRAYS.unnest(RefundUpdate, "u")} WHERE refunds.refund_id = u.refund_id
), new_tokens AS (
    INSERT INTO refund_tokens ({names(TokenRow)}) SELECT * FROM {_ARRAYS.unnest(TokenRow)}
), saved_tokens AS (
    UPDATE refund_tokens SET status = u.status
    FROM {_ARRAYS.unnest(TokenUpdate, "u")} WHERE refund_tokens.token = u.token
), saved_transfers AS (
    -- (network, tx_hash) is unique across refunds: one transfer pays one refund. The core refused a transfer
    -- another refund held when the batch was prepared; one claimed by a concurrent batch since then makes
    -- refund_id NULL here, a not-null violation that fails this batch, whose commands are then decided again
    -- one by one against the claim now committed.
    INSERT INTO refund_transactions ({names(TransferRow)}) SELECT * FROM {_ARRAYS.unnest(TransferRow)}
    ON CONFLICT (network, tx_hash) DO UPDATE SET status = excluded.status, reason = excluded.reason,
        refund_id = CASE WHEN refund_transactions.refund_id = excluded.refund_id THEN excluded.refund_id END
)
INSERT INTO commands ({names(CommandRow)}) SELECT * FROM {_ARRAYS.unnest(CommandRow)}
WHERE {_FENCE.guard}
"""


def _columns(rows: list[tuple], width: int) -> list[list]:
    return [list(column) for column in zip(*rows)] if rows else [[] for _ in range(width)]


Rows = dict[type, list]  # a batch's rows, by row type


def batch_rows(outcomes: list[Outcome], orders: dict[str, Order], encoded: dict[str, bytes], published: list[str],
               before: Mapping[str, Order]) -> Rows:
    """What a batch writes. `encoded` is each order as JSON; `published` names earlier batches whose events are on
    the stream now, so their outbox rows go. `before` holds the changed orders as the batch found them (as
    committed): their sessions, refunds and tokens are written only where they differ from those, not all again
    with each command."""
    appended = [a for o in outcomes for a in o.appended]
    held = orders.values()
    paid = {a.public.order_id: a.event.at for a in appended if isinstance(a.event, _PAID_EVENTS)}
    orders = [OrderRow(o.order_id, o.merchant_id, o.livemode, o.order_number, o.status.value, o.external_ref,
                       encoded[o.order_id].decode(), schema.SNAPSHOTS.current, o.version, o.created_at, o.updated_at,
                       paid.get(o.order_id), o.amount_paid, o.customer_email) for o in held]
    rows = {
        OrderRow: [row for row in orders if row.order_id not in before],
        OrderUpdate: [row for row in orders if row.order_id in before],
        OutboxRow: [OutboxRow(appended[0].event_id, " ".join(a.event_id for a in appended))] if appended else [],
        PublishedRow: [PublishedRow(batch_id) for batch_id in published],
        EventRow: [EventRow(a.event_id, a.public.order_id, a.seq, a.public.type, a.public.merchant_id,
                            a.public.livemode, _encode(a.event).decode(), a.event.at, a.payload, schema.EVENTS.current)
                   for a in appended],
        TransferRow: [TransferRow(a.network, a.tx_hash, r.refund_id, o.order_id, o.merchant_id, o.livemode,
                                  a.token_address, r.refund_to_address, r.amount, a.status, a.reason, a.submitted_at)
                      for o, r, a in _moved_transfers(held, appended)],
        CommandRow: [CommandRow(o.command_id, o.order_id, o.request_hash, o.recorded, o.kind, o.at, o.version or None)
                     for o in outcomes],
    }
    for inserted, updated in _PARTS.items():
        rows[inserted], rows[updated] = _changed_rows(inserted, held, before)
    return rows


def merged(batches: Iterable[Rows]) -> Rows:
    """The rows of several batches, written by one statement. Their orders are distinct (each order is one lane's);
    a refund transfer two of them post makes the statement fail, and each batch is then written on its own."""
    out: Rows = {}
    for rows in batches:
        for row_type, given in rows.items():
            out.setdefault(row_type, []).extend(given)
    return out


async def commit(conn: asyncpg.Connection, rows: Rows, fences: Collection[FenceRow]) -> None:
    """Write batches' rows in one statement, atomic on its own, only while every (partition, lease epoch) of
    `fences` is its partition's newest claim: raises actors.fencing.Fenced, having written nothing, otherwise."""
    try:
        await conn.execute(_COMMIT, *_ARRAYS.values({**rows, FenceRow: sorted(fences)}))
    except asyncpg.PostgresError as exc:
        if fenced := refusal(exc):
            raise fenced from None
        raise


def _session_row(o: Order, s: Session) -> SessionRow:
    return SessionRow(s.session_id, s.session_key, o.order_id, o.merchant_id, o.livemode, s.status.value, s.expires_at)


def _refund_row(o: Order, r: Refund) -> RefundRow:
    return RefundRow(r.refund_id, o.order_id, o.merchant_id, o.livemode, r.status.value, r.amount, r.link_token,
                     r.created_at, r.updated_at, r.awaits_provider)


def _token_row(o: Order, t: RefundToken) -> TokenRow:
    return TokenRow(t.token, o.order_id, o.merchant_id, o.livemode, t.status.value, t.expires_at, t.created_at)


_PARTS = {SessionRow: SessionUpdate, RefundRow: RefundUpdate, TokenRow: TokenUpdate}  # inserted, updated
_PART_ROWS: dict[type, tuple[Callable[[Order], tuple], Callable]] = {
    SessionRow: (attrgetter("sessions"), _session_row),
    RefundRow: (attrgetter("refunds"), _refund_row),
    TokenRow: (attrgetter("tokens"), _token_row),
}


def _changed_rows(row_type: type, held: Iterable[Order], before: Mapping[str, Order]) -> tuple[list, list]:
    """The rows of the changed orders' sessions, refunds or tokens that are new (inserted) or differ from their rows
    as committed (updated): a refund's command would otherwise write every earlier refund and the session of its
    order again, a new row version each. The core keeps the very object of a part it did not change, so only the
    parts it replaced or added are mapped to rows (the others are only told apart by identity), where mapping and
    comparing every part was 45 % of the CPU of an order's 1,000th refund."""
    parts_of, row_of = _PART_ROWS[row_type]
    new, changed = [], []
    for o in held:
        old = parts_of(before[o.order_id]) if o.order_id in before else ()
        if not old:  # a new order, or its first session, refund or token
            new += [row_of(o, part) for part in parts_of(o)]
            continue
        kept = {id(part) for part in old}
        fresh = [part for part in parts_of(o) if id(part) not in kept]
        if not fresh:
            continue
        now = {id(part) for part in parts_of(o)}
        replaced = {row_of(o, part) for part in old if id(part) not in now}  # as committed
        keys = {row[0] for row in replaced}
        for row in (row_of(o, part) for part in fresh):
            if row[0] not in keys:
                new.append(row)
            elif row not in replaced:
                changed.append(row)
    return new, changed


_PAID_EVENTS = (m.OrderPaid, m.OrderResolved)  # when an order is paid, for the paid time filters
_TRANSFER_EVENTS = (m.RefundTxSubmitted, m.RefundTxFailed, m.RefundExecuted)


def _moved_transfers(held: Iterable[Order], appended: list[Appended]) -> list[tuple[Order, Refund, TxAttempt]]:
    """The refund transfers the batch's events posted or settled, each once, as they stand after the batch."""
    moved = {(a.event.network, a.event.tx_hash) for a in appended if isinstance(a.event, _TRANSFER_EVENTS)}
    if not moved:
        return []
    return [(o, r, a) for o in held for r in o.refunds for a in r.attempts if (a.network, a.tx_hash) in moved]


async def snapshot(conn: asyncpg.Connection, order_id: str) -> Order | None:
    """The order's stored state, whatever schema it was written in."""
    row = await conn.fetchrow("SELECT state, state_schema FROM orders WHERE order_id = $1", order_id)
    return schema.snapshot(row["state"], row["state_schema"]) if row else None


async def history(conn: asyncpg.Connection, order_id: str) -> list[m.Event]:
    return [stored.event for stored in await recorded.events(conn, order_id)]


# A batch's payloads are its events' public bytes, in the order it names them.
_PENDING = """
SELECT o.batch_id, ARRAY(
    SELECT e.public FROM unnest(o.event_ids) WITH ORDINALITY AS b(event_id, n) JOIN events e USING (event_id)
    ORDER BY b.n) AS payloads
FROM outbox o WHERE o.created_at < $1 ORDER BY o.created_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED
"""


async def pending_outbox(conn: asyncpg.Connection, older_than: datetime, limit: int) -> list[tuple[str, list[bytes]]]:
    """Batches committed before `older_than` whose events may not have reached the stream."""
    rows = await conn.fetch(_PENDING, older_than, limit)
    return [(r["batch_id"], [bytes(p) for p in r["payloads"]]) for r in rows]


async def outbox_backlog(conn: asyncpg.Connection) -> tuple[int, float]:
    """Outbox rows and the age in seconds of the oldest (0 when empty)."""
    row = await conn.fetchrow(
        "SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM outbox")
    return row["n"], row["age"]


async def drop_outbox(conn: asyncpg.Connection, batch_ids: list[str]) -> None:
    await conn.execute("DELETE FROM outbox WHERE batch_id = ANY($1)", batch_ids)
