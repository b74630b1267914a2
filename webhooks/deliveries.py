"""The delivery log as merchants read it, and redelivery: one event again, or every failure since a time."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from contract.api import Event
from webhooks.events import encode
from webhooks.sql import Params

_COLUMNS = ("delivery_id, event_id, endpoint_id, event_type, status, attempts, next_attempt_at, last_attempt_at,"
            " last_status_code, last_error, payload, created_at")
_ATTEMPT_COLUMNS = ("delivery_id, number, attempted_at, url, request_headers, status_code, error, latency_ms,"
                    " response_body, succeeded")


async def page(conn: asyncpg.Connection, merchant_id: str, livemode: bool, filters: dict[str, str | None],
               before: tuple[datetime, str] | None, limit: int) -> list[asyncpg.Record]:
    """Newest first, `limit` rows at most; filters by endpoint_id, event_id, status or delivery_id."""
    p = Params()
    where = p.equal({"merchant_id": merchant_id, "livemode": livemode, **filters})
    where += p.before(before, "created_at, delivery_id")
    return await conn.fetch(
        f"SELECT {_COLUMNS} FROM webhook_deliveries WHERE {' AND '.join(where)}"
        f" ORDER BY created_at DESC, delivery_id DESC LIMIT {p(limit)}",
        *p.values,
    )


async def attempts(conn: asyncpg.Connection, delivery_ids: list[str]) -> dict[str, list[asyncpg.Record]]:
    rows = await conn.fetch(
        f"SELECT {_ATTEMPT_COLUMNS} FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, number",
        delivery_ids,
    )
    found: dict[str, list[asyncpg.Record]] = {}
    for r in rows:
        found.setdefault(r["delivery_id"], []).append(r)
    return found


# A redelivery starts a new round: due now, the retry window measured from its first attempt.
_AGAIN = "status = 'pending', next_attempt_at = {now}, round_attempts = 0, round_started_at = NULL"


async def redeliver_event(conn: asyncpg.Connection, endpoint_id: str, merchant_id: str, envelope: Event,
                          now: datetime) -> str:
    """The event's delivery to this endpoint, made or made due again; whether or not the endpoint wants its type."""
    return await conn.fetchval(
        "INSERT INTO webhook_deliveries (delivery_id, event_id, endpoint_id, merchant_id, livemode, event_type,"
        " payload, status, next_attempt_at, created_at)"
        " VALUES ('whd_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, 'pending', $7, $7)"
        f" ON CONFLICT (event_id, endpoint_id) DO UPDATE SET {_AGAIN.format(now='$7')} RETURNING delivery_id",
        envelope.id, endpoint_id, merchant_id, envelope.livemode, envelope.type, encode(envelope), now,
    )


async def redeliver_failed(conn: asyncpg.Connection, endpoint_id: str, since: datetime, now: datetime) -> list[str]:
    rows = await conn.fetch(
        f"UPDATE webhook_deliveries SET {_AGAIN.format(now='$3')}"
        " WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 RETURNING delivery_id",
        endpoint_id, since, now,
    )
    return [r["delivery_id"] for r in rows]
