"""The merchant-facing event envelope, rendered from the stream, from the order event log, or from merchant events."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg
import msgspec

from actors import schema
from actors.order import evolve
from actors.publication import PublicEvent, publish
from common.clock import iso
from common.ids import random_id
from contract.api import Event
from webhooks.sql import Params


class Listed(msgspec.Struct, frozen=True):
    envelope: Event
    created_at: datetime  # full precision, for the cursor
    tiebreak: str         # orders events of one instant: an order's events by seq


encode = msgspec.json.Encoder().encode
# A published event's bytes hold the routing facts too (merchant_id, order_id, seq); the envelope leaves them.
_decode_published = msgspec.json.Decoder(Event).decode


def from_public(event: PublicEvent) -> Event:
    return Event(id=event.id, type=event.type, created_at=event.created_at, livemode=event.livemode, data=event.data)


# Both logs in one order; only the filters asked for are written into the query, so each shape gets
# a plan that uses its index (a generic `$n IS NULL OR ...` plan would scan the merchant's whole log).
# The events of one command share their instant, so ties are broken by seq, then by id.
_TIEBREAK = {"events": "lpad(seq::text, 10, '0') || event_id", "merchant_events": "'0000000000' || event_id"}
_COLUMNS = {
    "events": "event_id, order_id, seq, created_at, type, NULL::jsonb AS data, livemode, public",
    "merchant_events": "event_id, NULL AS order_id, NULL AS seq, created_at, type, data, livemode, NULL AS public",
}


def _query(filters: dict[str, object], before: tuple[datetime, str] | None, limit: int) -> tuple[str, list]:
    p = Params()
    parts = []
    for table, columns in _COLUMNS.items():
        if table == "merchant_events" and filters.get("order_id") is not None:
            continue  # merchant events belong to no order
        tiebreak = _TIEBREAK[table]
        where = p.equal(filters) + p.before(before, f"created_at, {tiebreak}")
        parts.append(f"(SELECT {columns}, {tiebreak} AS tiebreak FROM {table} WHERE {' AND '.join(where)}"
                     f" ORDER BY created_at DESC, {tiebreak} DESC LIMIT {p(limit)})")
    query = (f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS both_logs"
             f" ORDER BY created_at DESC, tiebreak DESC LIMIT {p(limit)}")
    return query, p.values


# Each listed order's log up to the last event the page needs: the public data of an event depends on
# the order's state right after it (order_status, order_number), so it is rebuilt by replay.
_HISTORIES = """
SELECT e.order_id, e.seq, e.event_id, e.data, e.schema FROM events e
JOIN unnest($1::text[], $2::int[]) AS wanted(order_id, upto) ON e.order_id = wanted.order_id AND e.seq <= wanted.upto
WHERE e.order_id = ANY($1::text[])  -- index lookups on (order_id, seq), never a scan of the whole log
ORDER BY e.order_id, e.seq
"""


async def _replayed(conn: asyncpg.Connection, wanted: dict[str, int]) -> dict[str, Event]:
    rows = await conn.fetch(_HISTORIES, list(wanted), list(wanted.values()))
    rendered: dict[str, Event] = {}
    state = None
    for r in rows:
        event = schema.event(r["data"], r["schema"])
        state = evolve(None if r["seq"] == 1 else state, event)
        # No transition is on record with these events: each says the status right after itself (docs/webhooks.md,
        # `order_status`).
        rendered[r["event_id"]] = from_public(publish(r["event_id"], r["seq"], event, state, state.status))
    return rendered


async def page(conn: asyncpg.Connection, merchant_id: str, livemode: bool, *, type: str | None = None,
               order_id: str | None = None, event_id: str | None = None,
               before: tuple[datetime, str] | None = None, limit: int = 20) -> list[Listed]:
    """Newest first; `before` is the (created_at, event_id) the previous page ended on."""
    filters = {"merchant_id": merchant_id, "livemode": livemode, "type": type, "order_id": order_id,
               "event_id": event_id}
    sql, args = _query(filters, before, limit)
    rows = await conn.fetch(sql, *args)
    wanted: dict[str, int] = {}
    for r in rows:
        if r["order_id"] is not None and r["public"] is None:
            wanted[r["order_id"]] = max(wanted.get(r["order_id"], 0), r["seq"])
    replayed = await _replayed(conn, wanted) if wanted else {}
    return [Listed(_envelope(r, replayed), r["created_at"], r["tiebreak"]) for r in rows]


def _envelope(row, replayed: dict[str, Event]) -> Event:
    if row["public"] is not None:
        return _decode_published(row["public"])  # as published: the same envelope its webhooks carried
    if row["order_id"] is not None:
        return replayed[row["event_id"]]  # no public bytes of its own: rendered by replay
    return Event(id=row["event_id"], type=row["type"], created_at=iso(row["created_at"]), livemode=row["livemode"],
                 data=msgspec.json.decode(row["data"]))


async def find(conn: asyncpg.Connection, merchant_id: str, livemode: bool, event_id: str) -> Event | None:
    found = await page(conn, merchant_id, livemode, event_id=event_id, limit=1)
    return found[0].envelope if found else None


async def record_merchant_event(conn: asyncpg.Connection, merchant_id: str, livemode: bool, type: str,
                                data: dict[str, Any], at: datetime) -> Event:
    envelope = Event(id=random_id("evt"), type=type, created_at=iso(at), livemode=livemode, data=data)
    await conn.execute(
        "INSERT INTO merchant_events (event_id, merchant_id, livemode, type, data, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        envelope.id, merchant_id, livemode, type, encode(data).decode(), at,
    )
    return envelope
