"""Webhook endpoints in PostgreSQL: registration, reads, changes, secret roll, and disabling a failing one."""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg
import msgspec

from common.clock import iso
from common.ids import random_id
from common.secrets import Vault
from contract.api import Event
from webhooks import signing, store
from webhooks.events import record_merchant_event

MAX_PER_MODE = 16
ALL_EVENTS = "*"
DISABLED_EVENT = "webhook_endpoint.disabled"
TEST_EVENT = "webhook_endpoint.test"


class Endpoint(msgspec.Struct, frozen=True, kw_only=True):
    endpoint_id: str
    merchant_id: str
    livemode: bool
    url: str
    description: str | None
    enabled_events: list[str]
    status: str
    disabled_reason: str | None
    failing_since: datetime | None
    previous_secret_expires_at: datetime | None
    created_at: datetime
    updated_at: datetime


_FIELDS = ", ".join(Endpoint.__struct_fields__)


def _endpoint(row: asyncpg.Record) -> Endpoint:
    return Endpoint(**{name: row[name] for name in Endpoint.__struct_fields__})


async def count_locked(conn: asyncpg.Connection, merchant_id: str, livemode: bool) -> int:
    """How many endpoints the merchant has in this mode; concurrent registrations wait on the lock until
    this transaction ends, so two of them cannot both pass the limit."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || $1))", merchant_id)
    return await conn.fetchval(
        "SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1 AND livemode = $2 AND deleted_at IS NULL",
        merchant_id, livemode,
    )


async def create(conn: asyncpg.Connection, vault: Vault, merchant_id: str, livemode: bool, url: str,
                 enabled_events: list[str], description: str | None, now: datetime) -> tuple[Endpoint, str]:
    """The new endpoint and its signing secret, which is shown this once."""
    secret = signing.new_secret()
    row = await conn.fetchrow(
        f"INSERT INTO webhook_endpoints (endpoint_id, merchant_id, livemode, url, description, enabled_events,"
        f" status, secret_enc, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'enabled', $7, $8, $8)"
        f" RETURNING {_FIELDS}",
        random_id("we"), merchant_id, livemode, url, description, enabled_events, vault.seal(secret), now,
    )
    return _endpoint(row), secret


async def get(conn: asyncpg.Connection, merchant_id: str, livemode: bool, endpoint_id: str) -> Endpoint | None:
    row = await conn.fetchrow(
        f"SELECT {_FIELDS} FROM webhook_endpoints WHERE endpoint_id = $1 AND merchant_id = $2 AND livemode = $3"
        " AND deleted_at IS NULL",
        endpoint_id, merchant_id, livemode,
    )
    return _endpoint(row) if row else None


async def listing(conn: asyncpg.Connection, merchant_id: str, livemode: bool) -> list[Endpoint]:
    rows = await conn.fetch(
        f"SELECT {_FIELDS} FROM webhook_endpoints WHERE merchant_id = $1 AND livemode = $2 AND deleted_at IS NULL"
        " ORDER BY created_at, endpoint_id",
        merchant_id, livemode,
    )
    return [_endpoint(r) for r in rows]


async def update(conn: asyncpg.Connection, endpoint: Endpoint, changes: dict, now: datetime) -> Endpoint:
    """Apply the fields sent; disabling fails what is pending, enabling starts the endpoint's record afresh."""
    values = dict(changes)
    if values.get("status") == "disabled" and endpoint.status == "enabled":
        values["disabled_reason"] = "merchant"
        await store.fail_pending(conn, endpoint.endpoint_id, "endpoint disabled")
    elif values.get("status") == "enabled" and endpoint.status == "disabled":
        values.update(disabled_reason=None, failing_since=None)
    if not values:
        return endpoint
    names = list(values)
    assignments = ", ".join(f"{name} = ${n}" for n, name in enumerate(names, start=3))
    row = await conn.fetchrow(
        f"UPDATE webhook_endpoints SET updated_at = $2, {assignments} WHERE endpoint_id = $1 RETURNING {_FIELDS}",
        endpoint.endpoint_id, now, *values.values(),
    )
    return _endpoint(row)


async def delete(conn: asyncpg.Connection, endpoint: Endpoint, now: datetime) -> None:
    # Kept, marked deleted: its deliveries and attempts stay readable in the log.
    await conn.execute("UPDATE webhook_endpoints SET deleted_at = $2, status = 'disabled' WHERE endpoint_id = $1",
                       endpoint.endpoint_id, now)
    await store.fail_pending(conn, endpoint.endpoint_id, "endpoint deleted")


async def roll(conn: asyncpg.Connection, vault: Vault, endpoint: Endpoint, overlap: timedelta,
               now: datetime) -> tuple[Endpoint, str]:
    """A new secret; the current one keeps signing beside it until now + overlap (an older one stops now)."""
    secret = signing.new_secret()
    row = await conn.fetchrow(
        "UPDATE webhook_endpoints SET previous_secret_enc = CASE WHEN $3::timestamptz > $4 THEN secret_enc END,"
        " previous_secret_expires_at = CASE WHEN $3::timestamptz > $4 THEN $3::timestamptz END,"
        f" secret_enc = $2, updated_at = $4::timestamptz WHERE endpoint_id = $1 RETURNING {_FIELDS}",
        endpoint.endpoint_id, vault.seal(secret), now + overlap, now,
    )
    return _endpoint(row), secret


async def disable_failing(conn: asyncpg.Connection, endpoint_id: str, now: datetime) -> tuple[Event, str] | None:
    """Disable an endpoint that failed for the whole retry window; the event telling the merchant, and
    the merchant id, or None when it was no longer enabled."""
    row = await conn.fetchrow(
        "UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', updated_at = $2"
        " WHERE endpoint_id = $1 AND status = 'enabled' RETURNING merchant_id, livemode, url, failing_since",
        endpoint_id, now,
    )
    if row is None:
        return None
    await store.fail_pending(conn, endpoint_id, "endpoint disabled after failing")
    # `endpoint_id`: the name before `webhook_endpoint_id`, answered beside it throughout /b2b/v1 (docs/api.md, Names).
    data = {"webhook_endpoint_id": endpoint_id, "endpoint_id": endpoint_id, "url": row["url"], "status": "disabled", "disabled_reason": "failing",
            "failing_since": iso(row["failing_since"]), "disabled_at": iso(now)}
    event = await record_merchant_event(conn, row["merchant_id"], row["livemode"], DISABLED_EVENT, data, now)
    return event, row["merchant_id"]


# Per endpoint: whether any attempt of the batch succeeded, and the first failure after the last
# success. An endpoint is failing from its first failure after a success until its next success.
_FAILING = """
UPDATE webhook_endpoints e SET failing_since = CASE
        WHEN u.first_failure IS NULL THEN NULL
        WHEN u.succeeded THEN u.first_failure
        ELSE coalesce(e.failing_since, u.first_failure) END
FROM unnest($1::text[], $2::bool[], $3::timestamptz[]) AS u(endpoint_id, succeeded, first_failure)
WHERE e.endpoint_id = u.endpoint_id
RETURNING e.endpoint_id, e.merchant_id, e.livemode, e.url, e.status, e.failing_since
"""


async def track_failing(conn: asyncpg.Connection, rows: list[tuple[str, bool, datetime | None]]) -> list[asyncpg.Record]:
    return await conn.fetch(_FAILING, *[list(column) for column in zip(*rows)])


async def send_test_event(conn: asyncpg.Connection, endpoint: Endpoint, now: datetime) -> tuple[Event, str]:
    """A `webhook_endpoint.test` event, recorded like any merchant event and due at once to this endpoint alone
    (whichever types it subscribes to): its delivery and attempts show in the log as any other's. No order moves."""
    data = {"endpoint_id": endpoint.endpoint_id, "url": endpoint.url,
            "message": "A test event: nothing happened to any order."}
    event = await record_merchant_event(conn, endpoint.merchant_id, endpoint.livemode, TEST_EVENT, data, now)
    return event, await store.redeliver_event(conn, endpoint.endpoint_id, endpoint.merchant_id, event, now)
