"""Payment links in PostgreSQL: the link rows, the use a buyer's order takes, and each link's orders and money.

A link's `uses` are its paid orders and those whose session is still open at the time asked about (the SQL function
payment_link_uses, migration 031), so every read names the time it is made at."""

from __future__ import annotations

from datetime import datetime

import asyncpg
import msgspec

from common.ids import random_id

ACTIVE, ARCHIVED = "active", "archived"
# Orders whose money was received and kept or refunded: those a link's paid total and conversion count.
PAID_STATUSES = ["PAID", "PARTIALLY_REFUNDED", "REFUNDED"]


class PaymentLink(msgspec.Struct, frozen=True, kw_only=True):
    payment_link_id: str
    merchant_id: str
    livemode: bool
    name: str
    description: str | None
    amount: int | None  # micro-USD; None: the buyer enters it, within min_amount and max_amount
    min_amount: int | None
    max_amount: int | None
    max_uses: int | None
    uses: int  # paid orders, and unpaid ones whose session is open, at the time the row was read
    expires_at: datetime | None
    status: str
    created_at: datetime
    updated_at: datetime

    def unavailable(self, now: datetime) -> str | None:
        """Why a buyer cannot pay through the link now: archived, expired or used_up; None while it is open."""
        if self.status == ARCHIVED:
            return "archived"
        if self.expires_at is not None and now >= self.expires_at:
            return "expired"
        if self.max_uses is not None and self.uses >= self.max_uses:
            return "used_up"
        return None


class Totals(msgspec.Struct, frozen=True):
    orders: int = 0
    paid_orders: int = 0
    amount_paid: int = 0  # micro-USD received by the link's orders, less nothing: refunds show on the orders


_STORED_NAMES = [name for name in PaymentLink.__struct_fields__ if name != "uses"]
_STORED = ", ".join(_STORED_NAMES)


def _columns(at: str, table: str = "") -> str:
    """The link's columns, its uses at the time in parameter `at` ("$2") among them."""
    col = f"{table}." if table else ""
    return ", ".join([*(col + name for name in _STORED_NAMES), f"payment_link_uses({col}payment_link_id, {at}) AS uses"])


def _link(row: asyncpg.Record) -> PaymentLink:
    return PaymentLink(**dict(row))


async def create(conn, merchant_id: str, livemode: bool, now: datetime, **fields) -> PaymentLink:
    row = await conn.fetchrow(
        f"INSERT INTO payment_links (payment_link_id, merchant_id, livemode, name, description, amount, min_amount,"
        f" max_amount, max_uses, expires_at, created_at, updated_at)"
        f" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING {_STORED}, 0 AS uses",
        random_id("plink"), merchant_id, livemode, fields["name"], fields.get("description"), fields.get("amount"),
        fields.get("min_amount"), fields.get("max_amount"), fields.get("max_uses"), fields.get("expires_at"), now)
    return _link(row)


async def get(conn, payment_link_id: str, now: datetime, merchant_id: str | None = None,
              livemode: bool | None = None, *, lock: bool = False) -> PaymentLink | None:
    """The link; with a merchant and mode, only if it is theirs."""
    row = await conn.fetchrow(
        f"SELECT {_columns('$4')} FROM payment_links WHERE payment_link_id = $1"
        " AND ($2::text IS NULL OR merchant_id = $2) AND ($3::bool IS NULL OR livemode = $3)"
        + (" FOR UPDATE" if lock else ""), payment_link_id, merchant_id, livemode, now)
    return _link(row) if row else None


async def with_merchant_name(conn, payment_link_id: str, now: datetime) -> tuple[PaymentLink, str] | None:
    """The link and its merchant's name, for the buyer's page."""
    row = await conn.fetchrow(
        f"SELECT {_columns('$2', 'l')}, m.name AS merchant_name"
        " FROM payment_links l JOIN merchants m USING (merchant_id) WHERE l.payment_link_id = $1", payment_link_id, now)
    if row is None:
        return None
    fields = dict(row)
    return PaymentLink(**{k: v for k, v in fields.items() if k != "merchant_name"}), fields["merchant_name"]


async def listing(conn, merchant_id: str, livemode: bool, now: datetime, before: tuple[datetime, str] | None,
                  limit: int, status: str | None = None) -> list[PaymentLink]:
    """Newest first, from the page's cursor on."""
    rows = await conn.fetch(
        f"SELECT {_columns('$7')} FROM payment_links WHERE merchant_id = $1 AND livemode = $2"
        " AND ($3::text IS NULL OR status = $3)"
        " AND ($4::timestamptz IS NULL OR (created_at, payment_link_id) < ($4, $5))"
        " ORDER BY created_at DESC, payment_link_id DESC LIMIT $6",
        merchant_id, livemode, status, before[0] if before else None, before[1] if before else "", limit, now)
    return [_link(r) for r in rows]


async def update(conn, link: PaymentLink, changes: dict, now: datetime) -> PaymentLink:
    """Set the named columns (their names come from the patch body's fields, never from the client's text)."""
    names = list(changes)
    sets = ", ".join(f"{name} = ${n + 2}" for n, name in enumerate(names))
    row = await conn.fetchrow(
        f"UPDATE payment_links SET {sets}, updated_at = ${len(names) + 2} WHERE payment_link_id = $1"
        f" RETURNING {_columns(f'${len(names) + 2}')}", link.payment_link_id, *changes.values(), now)
    return _link(row)


async def take_use(conn, payment_link_id: str, order_id: str, now: datetime, held_until: datetime) -> bool:
    """Take one use of an open link for a new order whose session lasts until `held_until`, in the caller's
    transaction; False when the link is closed (archived, expired or used up). The link's row lock orders
    concurrent buyers, and each counts the uses after the one before it committed, so the limit holds."""
    link = await conn.fetchrow(
        "SELECT max_uses FROM payment_links WHERE payment_link_id = $1 AND status = 'active'"
        " AND (expires_at IS NULL OR expires_at > $2) FOR UPDATE", payment_link_id, now)
    if link is None:
        return False
    if link["max_uses"] is not None and await conn.fetchval(
            "SELECT payment_link_uses($1, $2)", payment_link_id, now) >= link["max_uses"]:
        return False
    await conn.execute("INSERT INTO payment_link_orders (order_id, payment_link_id, created_at, held_until)"
                       " VALUES ($1, $2, $3, $4)", order_id, payment_link_id, now, held_until)
    return True


async def give_back(pool: asyncpg.Pool, order_id: str) -> None:
    """The use of an order whose creation was refused: nothing of it stays."""
    await pool.execute("DELETE FROM payment_link_orders WHERE order_id = $1", order_id)


async def totals(conn, payment_link_ids: list[str]) -> dict[str, Totals]:
    """Each link's orders, those paid, and the money they received."""
    rows = await conn.fetch(
        "SELECT l.payment_link_id, count(*) AS orders,"
        " count(*) FILTER (WHERE o.status = ANY($2::text[])) AS paid_orders,"
        " coalesce(sum(o.amount_paid) FILTER (WHERE o.status = ANY($2::text[])), 0) AS paid"
        " FROM payment_link_orders l JOIN orders o USING (order_id)"
        " WHERE l.payment_link_id = ANY($1::text[]) GROUP BY l.payment_link_id",
        payment_link_ids, PAID_STATUSES)
    return {r["payment_link_id"]: Totals(r["orders"], r["paid_orders"], int(r["paid"])) for r in rows}
