"""The delivery log as merchants read it (redelivery writes through webhooks/store.py)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

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
