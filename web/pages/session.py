"""The checkout a session key opens: its order and session, the merchant's name and addresses, reported attempts."""

from __future__ import annotations

import asyncpg
import msgspec

from accounts import merchants
from actors.views import OrderView, SessionView, stored_view


class Attempt(msgspec.Struct, frozen=True):
    network: str
    tx_hash: str
    status: str
    confirmations: int | None


class Checkout(msgspec.Struct, frozen=True, kw_only=True):
    order: OrderView
    session: SessionView
    merchant_name: str
    receive_addresses: dict[str, str]
    attempts: tuple[Attempt, ...]




async def load(pool: asyncpg.Pool, session_key: str, *, with_merchant: bool = True) -> Checkout | None:
    """None for an unknown key; the status poll skips the merchant's row, which it never shows."""
    row = await pool.fetchrow(
        "SELECT o.state, o.state_schema, s.session_id, m.name FROM checkout_sessions s JOIN orders o USING (order_id)"
        " JOIN merchants m ON m.merchant_id = o.merchant_id WHERE s.session_key = $1",
        session_key,
    )
    if row is None:
        return None
    order = stored_view(row["state"], row["state_schema"])
    session = next(s for s in order.sessions if s.session_key == session_key)
    attempts = await pool.fetch(
        "SELECT network, tx_hash, status, confirmations FROM payment_attempts WHERE session_id = $1"
        " ORDER BY created_at",
        row["session_id"],
    )
    settings = await merchants.settings(pool, order.merchant_id) if with_merchant else merchants.Settings()
    return Checkout(
        order=order, session=session, merchant_name=row["name"], receive_addresses=dict(settings.receive_addresses),
        attempts=tuple(Attempt(a["network"], a["tx_hash"], a["status"], a["confirmations"]) for a in attempts),
    )
