"""The notifications tables: who is told, what they were told, which mails are due, and each user's choices."""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg

from common.ids import random_id

# The module, not its names: the dashboard imports this module while notify.kinds may still be importing the
# dashboard's roles (a cycle that holds as long as names are looked up when called).
from notify import kinds

# Current members only: a removed member's row stays (their sales and audit entries name them) but hears nothing.
_RECIPIENTS = (
    "SELECT u.user_id, u.role, c.enabled FROM staff_users u"
    " LEFT JOIN notification_choices c ON c.user_id = u.user_id AND c.kind = $2"
    " WHERE u.merchant_id = $1 AND u.removed_at IS NULL")

# A second delivery of the same event (the stream is at least once) meets the unique key and adds nothing.
_INSERT = (
    "INSERT INTO notifications (notification_id, user_id, merchant_id, livemode, kind, source_id, title, body, link,"
    " created_at, mail_status, mail_due_at)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::text[], $6::text[], $7::text[],"
    " $8::text[], $9::text[], $10::timestamptz[], $11::text[], $12::timestamptz[])"
    " ON CONFLICT (user_id, kind, source_id) DO NOTHING")


async def _still_waiting(conn: asyncpg.Connection, notices: list[kinds.Notice]) -> list[kinds.Notice]:
    """The notices whose refund, if they name one, still waits for review (the refunds table is written in the
    transaction that commits the order's events, so it is never behind the stream)."""
    asked = [n.pending_refund_id for n in notices if n.pending_refund_id]
    if not asked:
        return notices
    pending = {r["refund_id"] for r in await conn.fetch(
        "SELECT refund_id FROM refunds WHERE refund_id = ANY($1::text[]) AND status = 'PENDING'", asked)}
    return [n for n in notices if n.pending_refund_id is None or n.pending_refund_id in pending]


async def record(conn: asyncpg.Connection, notices: list[kinds.Notice], now: datetime, mail: bool) -> int:
    """A notification for every current member who wants each notice; returns how many were new."""
    rows = []
    for i, n in enumerate(await _still_waiting(conn, notices)):
        # A microsecond apart in the order of their events, so a list newest first shows them in that order (ids
        # made within one millisecond have no order of their own).
        at = now + timedelta(microseconds=i)
        for user in await conn.fetch(_RECIPIENTS, n.merchant_id, n.kind.value):
            if kinds.wanted(user["role"], n.kind, user["enabled"]):
                rows.append((random_id("ntf"), user["user_id"], n.merchant_id, n.livemode, n.kind.value, n.source_id,
                             n.title, n.body, n.path, at, "pending" if mail else "none", at if mail else None))
    if not rows:
        return 0
    status = await conn.execute(_INSERT, *[list(column) for column in zip(*rows)])
    return int(status.rsplit(" ", 1)[1])


# Mail: due rows are leased by moving their due time past the lease, so two senders never take the same one and a
# sender that dies leaves them due again when the lease ends.
_CLAIM = (
    "UPDATE notifications n SET mail_due_at = $2 FROM staff_users u"
    " WHERE n.notification_id IN (SELECT d.notification_id FROM notifications d JOIN staff_users m USING (user_id)"
    # A removal racing the notice's recording leaves its mail behind: never sent (nor in the way of the others).
    "   WHERE d.mail_status = 'pending' AND d.mail_due_at <= $1 AND m.removed_at IS NULL"
    "   ORDER BY d.mail_due_at LIMIT $3 FOR UPDATE OF d SKIP LOCKED) AND u.user_id = n.user_id"
    " RETURNING n.notification_id, n.title, n.body, n.link, n.mail_attempts, u.email")


async def claim_mails(conn: asyncpg.Connection, now: datetime, lease_until: datetime, limit: int) -> list:
    return await conn.fetch(_CLAIM, now, lease_until, limit)


async def drop_for_removed(conn: asyncpg.Connection, user_id: str) -> None:
    """A member removed from the team: what they were told and not yet read, and every mail not yet sent, goes.
    Call in the removal's transaction."""
    await conn.execute("DELETE FROM notifications WHERE user_id = $1 AND (read_at IS NULL OR mail_status = 'pending')",
                       user_id)


async def mailed(conn: asyncpg.Connection, notification_id: str) -> None:
    await conn.execute("UPDATE notifications SET mail_status = 'sent', mail_attempts = mail_attempts + 1,"
                       " mail_due_at = NULL, mail_error = NULL WHERE notification_id = $1", notification_id)


async def mail_failed(conn: asyncpg.Connection, notification_id: str, error: str, retry_at: datetime | None) -> None:
    """Due again at `retry_at`, or given up (failed) without one."""
    await conn.execute(
        "UPDATE notifications SET mail_attempts = mail_attempts + 1, mail_error = $2,"
        " mail_status = CASE WHEN $3::timestamptz IS NULL THEN 'failed' ELSE 'pending' END, mail_due_at = $3"
        " WHERE notification_id = $1", notification_id, error[:500], retry_at)


async def failing_endpoints(conn: asyncpg.Connection, failing_before: datetime) -> list:
    """Enabled endpoints failing since before `failing_before` (the sweep's dedupe key is their failing_since)."""
    return await conn.fetch(
        "SELECT endpoint_id, merchant_id, livemode, url, failing_since FROM webhook_endpoints"
        " WHERE failing_since < $1 AND status = 'enabled' AND deleted_at IS NULL", failing_before)


async def card_account_errors(conn: asyncpg.Connection) -> list:
    """Card accounts the provider refuses (cards/accounts.py records it; the dedupe key is last_error_at)."""
    return await conn.fetch("SELECT account_id, merchant_id, livemode, provider, last_error, last_error_at"
                            " FROM card_accounts WHERE last_error_at IS NOT NULL")


# What the dashboard and the app show

async def listed(pool: asyncpg.Pool, user_id: str, limit: int = 50) -> list:
    return await pool.fetch(
        "SELECT notification_id, kind, livemode, title, body, link, created_at, read_at FROM notifications"
        " WHERE user_id = $1 ORDER BY created_at DESC, notification_id DESC LIMIT $2", user_id, limit)


async def unread(pool: asyncpg.Pool, user_id: str) -> int:
    return await pool.fetchval("SELECT count(*) FROM notifications WHERE user_id = $1 AND read_at IS NULL", user_id)


async def mark_read(pool: asyncpg.Pool, user_id: str, now: datetime, notification_id: str | None = None) -> int:
    """One of the user's notifications read, or all of them without an id; another user's is never touched."""
    status = await pool.execute(
        "UPDATE notifications SET read_at = $2 WHERE user_id = $1 AND read_at IS NULL"
        " AND ($3::text IS NULL OR notification_id = $3)", user_id, now, notification_id)
    return int(status.rsplit(" ", 1)[1])


async def choices(pool: asyncpg.Pool, user_id: str) -> dict[kinds.Kind, bool]:
    rows = await pool.fetch("SELECT kind, enabled FROM notification_choices WHERE user_id = $1", user_id)
    return {kinds.Kind(r["kind"]): r["enabled"] for r in rows if r["kind"] in kinds.Kind._value2member_map_}


async def choose(pool: asyncpg.Pool, user_id: str, chosen: dict[kinds.Kind, bool]) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await conn.executemany(
            "INSERT INTO notification_choices (user_id, kind, enabled) VALUES ($1, $2, $3)"
            " ON CONFLICT (user_id, kind) DO UPDATE SET enabled = excluded.enabled",
            [(user_id, kind.value, on) for kind, on in chosen.items()])
