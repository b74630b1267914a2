"""The watchers' PostgreSQL side: what is due for a check, the progress they record, and their scan cursors."""

from __future__ import annotations

from datetime import datetime

import asyncpg
import msgspec

from chain_watchers.verify import Verdict, due_height
from common.ids import derived_id


class RefundTx(msgspec.Struct, frozen=True, kw_only=True):
    network: str
    tx_hash: str
    refund_id: str
    order_id: str
    merchant_id: str
    livemode: bool
    token_address: str
    to_address: str
    amount: int  # micro-USD
    seen_block: str | None
    missing_since: datetime | None
    submitted_at: datetime


class Attempt(msgspec.Struct, frozen=True, kw_only=True):
    attempt_id: str
    session_id: str
    order_id: str
    merchant_id: str
    livemode: bool
    network: str
    tx_hash: str
    seen_block: str | None
    missing_since: datetime | None
    created_at: datetime


class Session(msgspec.Struct, frozen=True, kw_only=True):
    """A session a hashless payment may still arrive for, with its merchant's receive address on one network."""

    session_id: str
    order_id: str
    merchant_id: str
    livemode: bool
    open: bool
    address: str


async def _rows(pool: asyncpg.Pool, kind: type, query: str, *args) -> list:
    return [kind(**dict(r)) for r in await pool.fetch(query, *args)]


async def due_refund_txs(pool: asyncpg.Pool, network: str, checked_before: datetime, head: int | None,
                         limit: int) -> list[RefundTx]:
    """Transfers still being verified for a refund still APPROVED (not canceled, nor executed by another
    transfer), never checked, checked before `checked_before`, or deep enough at `head` (None: unknown). The order
    actor writes both tables in one commit, so they always agree."""
    return await _rows(
        pool, RefundTx,
        "SELECT network, tx_hash, t.refund_id, t.order_id, t.merchant_id, t.livemode, t.token_address, t.to_address,"
        " t.amount, c.seen_block, c.missing_since, t.submitted_at"
        " FROM refund_transactions t JOIN refunds r USING (refund_id)"
        " LEFT JOIN refund_transfer_checks c USING (network, tx_hash) WHERE t.status = 'verifying' AND network = $1"
        " AND r.status = 'APPROVED'"
        " AND (c.checked_at IS NULL OR c.checked_at <= $2 OR c.due_height <= $3)"
        " ORDER BY c.checked_at NULLS FIRST LIMIT $4",
        network, checked_before, head, limit)


async def refund_progress(pool: asyncpg.Pool, tx: RefundTx, verdict: Verdict, required: int, now: datetime) -> None:
    """The watcher's own table: the order actor writes the transfer's status when it applies a verdict."""
    await pool.execute(
        "INSERT INTO refund_transfer_checks (network, tx_hash, confirmations, required, seen_block, missing_since,"
        " checked_at, due_height) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (network, tx_hash) DO UPDATE"
        " SET confirmations = excluded.confirmations, required = excluded.required, seen_block = excluded.seen_block,"
        " missing_since = excluded.missing_since, checked_at = excluded.checked_at, due_height = excluded.due_height",
        tx.network, tx.tx_hash, verdict.confirmations, required, verdict.seen_block, verdict.missing_since, now,
        due_height(verdict.seen_block, required))


async def due_attempts(pool: asyncpg.Pool, network: str, checked_before: datetime, head: int | None,
                       limit: int) -> list[Attempt]:
    """Attempts not yet in a block, checked before `checked_before`, or deep enough at `head` (None: unknown)."""
    return await _rows(
        pool, Attempt,
        "SELECT attempt_id, session_id, order_id, merchant_id, livemode, network, tx_hash, seen_block, missing_since,"
        " created_at FROM payment_attempts WHERE status IN ('reported', 'confirming') AND network = $1"
        " AND (status = 'reported' OR updated_at <= $2 OR due_height <= $3) ORDER BY updated_at LIMIT $4",
        network, checked_before, head, limit)


async def attempt_progress(pool: asyncpg.Pool, attempt: Attempt, status: str, verdict: Verdict, required: int,
                           now: datetime) -> None:
    await pool.execute(
        "UPDATE payment_attempts SET status = $2, confirmations = $3, reason = $4, seen_block = $5,"
        " missing_since = $6, updated_at = $7, due_height = $8 WHERE attempt_id = $1",
        attempt.attempt_id, status, verdict.confirmations, verdict.reason, verdict.seen_block, verdict.missing_since,
        now, due_height(verdict.seen_block, required))


async def add_attempt(db: asyncpg.Connection | asyncpg.Pool, attempt_id: str, session_id: str, order_id: str,
                      merchant_id: str, livemode: bool, network: str, tx_hash: str) -> bool:
    """A payment attempt for the session (reported by the page, or found by a watcher); True when it is new: a
    transaction is an attempt of one session only."""
    return bool(await db.fetchval(
        "INSERT INTO payment_attempts (attempt_id, session_id, order_id, merchant_id, livemode, network, tx_hash)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (network, tx_hash) DO NOTHING RETURNING attempt_id",
        attempt_id, session_id, order_id, merchant_id, livemode, network, tx_hash))


async def add_found_attempt(conn, session: Session, network: str, tx_hash: str) -> bool:
    """Record a payment found without a hash as an attempt (the page shows it); True when it is new."""
    return await add_attempt(conn, derived_id("pat", f"{network}:{tx_hash}", "found by the watcher"),
                             session.session_id, session.order_id, session.merchant_id, session.livemode, network,
                             tx_hash)


async def sessions(pool: asyncpg.Pool, network: str, livemode: bool, ended_after: datetime,
                   now: datetime) -> list[Session]:
    """Sessions open or ended after `ended_after`, of merchants with a receive address on `network`."""
    return await _rows(
        pool, Session,
        "SELECT s.session_id, s.order_id, s.merchant_id, s.livemode, s.status = 'OPEN' AND s.expires_at > $4 AS open,"
        " m.settings->'receive_addresses'->>$1 AS address FROM checkout_sessions s JOIN merchants m USING (merchant_id)"
        " WHERE s.expires_at > $2 AND s.livemode = $3 AND m.settings->'receive_addresses' ? $1",
        network, ended_after, livemode, now)


async def receivable(pool: asyncpg.Pool, network: str) -> bool:
    """Whether any merchant takes payments on the network: only then is its chain worth reading."""
    return bool(await pool.fetchval(
        "SELECT EXISTS (SELECT 1 FROM merchants WHERE settings->'receive_addresses' ? $1)", network))


async def cursor(conn, network: str, scope: str = "") -> int | None:
    return await conn.fetchval("SELECT position FROM chain_cursors WHERE network = $1 AND scope = $2", network, scope)


async def move_cursor(conn, network: str, position: int, scope: str = "") -> None:
    await conn.execute(
        "INSERT INTO chain_cursors (network, scope, position) VALUES ($1, $2, $3) ON CONFLICT (network, scope)"
        " DO UPDATE SET position = excluded.position, updated_at = now()", network, scope, position)
