"""`service streams republish`: committed events put on the events stream again, for a Redis that lost them.

PostgreSQL keeps every event with the bytes it was published with (`events.public`); the events stream only
carries them to the webhooks dispatcher. When Redis loses data (no persistence, a failover to a replica that
was behind), events committed before the loss may never have reached the dispatcher. Appending them again is
safe: the dispatcher records one delivery per (event, endpoint) and ignores a second (`ON CONFLICT DO NOTHING`),
so an event it had already taken is not delivered twice.
"""

from __future__ import annotations

from datetime import datetime

import asyncpg
import msgspec

from streams.connection import Client
from streams.events import publication
from streams.names import Keys

PAGE = 1000


class Republished(msgspec.Struct, kw_only=True):
    since: datetime
    merchant_id: str | None
    events: int
    stream: str
    dry_run: bool


async def republish(conn: asyncpg.Connection, redis: Client, keys: Keys, since: datetime,
                    merchant_id: str | None = None, dry_run: bool = False) -> Republished:
    """Every event committed since `since` (of one merchant), appended to the events stream in commit order."""
    count, page = 0, []
    # One scan, read through a cursor: no index leads by time (the hot path would pay for one), and a page query
    # per thousand events would scan the table once per page. In commit order, an order's events in sequence.
    async with conn.transaction(readonly=True):
        async for row in conn.cursor(
                "SELECT public FROM events WHERE created_at >= $1 AND ($2::text IS NULL OR merchant_id = $2)"
                " ORDER BY created_at, order_id, seq", since, merchant_id, prefetch=PAGE):
            page.append(bytes(row["public"]))
            if len(page) == PAGE:
                count += await _append(redis, keys, page, dry_run)
                page = []
        count += await _append(redis, keys, page, dry_run)
    return Republished(since=since, merchant_id=merchant_id, events=count, stream=keys.events, dry_run=dry_run)


async def _append(redis: Client, keys: Keys, payloads: list[bytes], dry_run: bool) -> int:
    if not dry_run:
        # The request id is not kept with the event: a republished event's delivery names none.
        for command in publication(keys, [(payload, "") for payload in payloads]):
            await redis.execute_command(*command)
    return len(payloads)
