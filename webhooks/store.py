"""Deliveries in PostgreSQL: fan-out of events to endpoints, claims of due work, outcomes, redelivery, disabling."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

import asyncpg

from contract.api import Event
from webhooks.events import encode

# What a claimed delivery needs to be sent: its row and its endpoint's address and secrets.
_JOB_COLUMNS = ("d.delivery_id, d.event_id, d.event_type, d.endpoint_id, d.livemode, d.payload, d.attempts,"
                " d.round_attempts, d.round_started_at, d.merchant_id, d.order_id, d.request_id, e.url, e.secret_enc,"
                " e.previous_secret_enc, e.previous_secret_expires_at")

# Events become deliveries for every enabled endpoint of their merchant and mode that wants the
# type and existed when the event happened; a second publication of an event adds nothing (at
# least once upstream, deduplicated here by the event id). Deliveries to endpoints whose lane in
# this process is full are left due for the sweep instead of claimed.
_FAN_OUT = f"""
WITH ev AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::timestamptz[], $6::bytea[], $10::text[],
                         $11::text[])
        AS ev(event_id, type, merchant_id, livemode, created_at, payload, order_id, request_id)
), d AS (
    INSERT INTO webhook_deliveries (delivery_id, event_id, endpoint_id, merchant_id, livemode, event_type, payload,
                                    status, next_attempt_at, created_at, order_id, request_id)
    SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), ev.event_id, e.endpoint_id, ev.merchant_id,
           ev.livemode, ev.type, ev.payload, 'pending',
           CASE WHEN e.endpoint_id = ANY($9::text[]) THEN $7::timestamptz ELSE $8::timestamptz END, $7,
           ev.order_id, ev.request_id
    FROM ev JOIN webhook_endpoints e ON e.merchant_id = ev.merchant_id AND e.livemode = ev.livemode
        AND e.status = 'enabled' AND e.deleted_at IS NULL
        AND ('*' = ANY(e.enabled_events) OR ev.type = ANY(e.enabled_events))
        AND ev.created_at >= date_trunc('second', e.created_at)
    ON CONFLICT (event_id, endpoint_id) DO NOTHING
    RETURNING *
)
SELECT {_JOB_COLUMNS} FROM d JOIN webhook_endpoints e USING (endpoint_id)
WHERE NOT (d.endpoint_id = ANY($9::text[]))
"""


class Published(NamedTuple):
    """An event to fan out, with what its deliveries log: the order it concerns and the request that caused it."""

    event: Event
    merchant_id: str
    at: datetime
    order_id: str | None = None
    request_id: str | None = None


async def fan_out(conn: asyncpg.Connection, events: list[Published], now: datetime,
                  lease_until: datetime, busy: list[str]) -> list[asyncpg.Record]:
    columns = list(zip(*[(p.event.id, p.event.type, p.merchant_id, p.event.livemode, p.at, encode(p.event))
                         for p in events]))
    return await conn.fetch(_FAN_OUT, *columns, now, lease_until, busy, [p.order_id for p in events],
                            [p.request_id for p in events])


# Due deliveries of every endpoint but the busy ones ($4), or of one endpoint ($4 is then its id).
_CLAIM = """
WITH due AS (
    SELECT d.delivery_id FROM webhook_deliveries d JOIN webhook_endpoints e USING (endpoint_id)
    WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND e.status = 'enabled' AND e.deleted_at IS NULL
      AND {which}
    ORDER BY d.next_attempt_at LIMIT $3
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d SET next_attempt_at = $2 FROM webhook_endpoints e
-- = ANY(ARRAY(...)) keeps the primary-key lookups; a join with the CTE was planned as a full scan.
WHERE d.delivery_id = ANY(ARRAY(SELECT delivery_id FROM due)) AND e.endpoint_id = d.endpoint_id
RETURNING {columns}
"""
_CLAIM_ALL = _CLAIM.format(which="NOT (d.endpoint_id = ANY($4::text[]))", columns=_JOB_COLUMNS)
_CLAIM_ONE = _CLAIM.format(which="d.endpoint_id = $4", columns=_JOB_COLUMNS)


async def claim_due(conn: asyncpg.Connection, now: datetime, lease_until: datetime, limit: int,
                    busy: list[str]) -> list[asyncpg.Record]:
    """Lease due deliveries: until lease_until no other sweep takes them; after it, a crash is healed."""
    return await conn.fetch(_CLAIM_ALL, now, lease_until, limit, busy)


async def claim_due_of(conn: asyncpg.Connection, endpoint_id: str, now: datetime, lease_until: datetime,
                       limit: int) -> list[asyncpg.Record]:
    """The same for one endpoint whose lane has room (an index on (endpoint_id, next_attempt_at))."""
    return await conn.fetch(_CLAIM_ONE, now, lease_until, limit, endpoint_id)


# A delivery failed meanwhile (its endpoint was disabled) stays failed unless this attempt succeeded.
_RECORD = """
WITH r AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::int[], $6::text[],
                         $7::int[], $8::timestamptz[], $9::int[], $10::text[], $11::jsonb[], $12::int[], $13::text[],
                         $14::bool[])
        AS r(delivery_id, status, next_at, attempted_at, status_code, error, round_attempts, round_started_at,
             number, url, request_headers, latency_ms, response_body, succeeded)
), logged AS (
    INSERT INTO webhook_attempts (delivery_id, number, url, request_headers, status_code, error, latency_ms,
                                  response_body, succeeded, attempted_at)
    SELECT delivery_id, number, url, request_headers, status_code, error, latency_ms, response_body, succeeded,
           attempted_at FROM r
)
UPDATE webhook_deliveries d SET
    status = CASE WHEN d.status = 'pending' OR r.succeeded THEN r.status ELSE d.status END,
    next_attempt_at = CASE WHEN d.status = 'pending' AND r.status = 'pending' THEN r.next_at END,
    attempts = d.attempts + 1, round_attempts = r.round_attempts, round_started_at = r.round_started_at,
    last_attempt_at = r.attempted_at, last_status_code = r.status_code, last_error = r.error
FROM r WHERE d.delivery_id = ANY($1::text[]) AND d.delivery_id = r.delivery_id  -- ANY: primary-key lookups
"""


async def record(conn: asyncpg.Connection, rows: list[tuple]) -> None:
    await conn.execute(_RECORD, *[list(column) for column in zip(*rows)])


async def fail_pending(conn: asyncpg.Connection, endpoint_id: str, why: str) -> None:
    """A disabled or deleted endpoint gets no more attempts; redelivery brings them back once it is enabled."""
    await conn.execute(
        "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL,"
        " last_error = coalesce(last_error, $2) WHERE endpoint_id = $1 AND status = 'pending'",
        endpoint_id, why,
    )


async def due_at(conn: asyncpg.Connection, delivery_ids: list[str], at: datetime) -> None:
    """Pending deliveries due (again) at `at`: now, to give back those a dispatcher has no room for, to whoever sweeps
    next; later, to renew the lease of those it holds."""
    await conn.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE delivery_id = ANY($1) AND status = 'pending'",
        delivery_ids, at,
    )


async def retry_queue(conn: asyncpg.Connection, now: datetime) -> tuple[int, float]:
    """Pending deliveries (waiting for their next attempt or leased to a sender), and how many seconds the most
    overdue one has been due (0 when none is): both read off the partial index of pending deliveries."""
    row = await conn.fetchrow(
        "SELECT count(*) AS n, coalesce(extract(epoch FROM $1 - min(next_attempt_at)"
        " FILTER (WHERE next_attempt_at <= $1)), 0)::float8 AS overdue"
        " FROM webhook_deliveries WHERE status = 'pending'", now)
    return row["n"], row["overdue"]


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
