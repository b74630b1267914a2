"""Per-session unique amounts on EVM and TRON: what a session quotes so a transfer of exactly that amount names it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

import asyncpg
import msgspec

FAMILIES = ("evm", "tron")  # the chains whose transfers carry no memo or reference a session could be found by
MAX_OFFSET = 9_999  # micro-USD: the buyer pays less than a cent more at worst
# A payment can arrive after its session ended (a slow wallet, a buyer paying an old page): the amount stays
# reserved this long after expiry, so a late payment still finds its order instead of another session.
RESERVED_AFTER_EXPIRY = timedelta(hours=24)


class Reservation(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    order_id: str
    merchant_id: str
    livemode: bool
    network: str
    address: str
    amount: int


def pick(due: int, taken: Iterable[int], max_offset: int = MAX_OFFSET) -> int | None:
    """The smallest amount at or above `due` no other live session quotes, or None when the range is exhausted.

    The offset starts at 0: the common case (one open checkout per address and amount) quotes the exact price.
    """
    busy = set(taken)
    return next((due + offset for offset in range(max_offset + 1) if due + offset not in busy), None)


async def assign(pool: asyncpg.Pool, *, session_id: str, order_id: str, merchant_id: str, livemode: bool, due: int,
                 expires_at: datetime, now: datetime, targets: Mapping[str, str]) -> dict[str, int]:
    """The amount (micro-USD) the session quotes per network of `targets` (network -> receive address, normal form).

    Idempotent while `due` and the address stay the same; a changed residual picks again. A network whose range is
    exhausted is left out, and the page quotes the plain amount there (the buyer then reports the hash).
    """
    amounts = {}
    async with pool.acquire() as conn:
        for network, address in targets.items():
            async with conn.transaction():
                # One picker per (network, address) at a time: two sessions must never take the same amount.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"{network}:{address}")
                mine = await conn.fetchrow(
                    "SELECT address, due, amount FROM unique_amounts WHERE session_id = $1 AND network = $2",
                    session_id, network)
                if mine is not None and (mine["address"], mine["due"]) == (address, due):
                    amounts[network] = mine["amount"]
                    continue
                taken = await conn.fetch(
                    "SELECT amount FROM unique_amounts WHERE network = $1 AND address = $2 AND reserved_until > $3"
                    " AND session_id <> $4", network, address, now, session_id)
                amount = pick(due, (r["amount"] for r in taken))
                if amount is None:
                    continue
                await conn.execute(
                    "INSERT INTO unique_amounts (session_id, network, address, due, amount, order_id, merchant_id,"
                    " livemode, reserved_until) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                    " ON CONFLICT (session_id, network) DO UPDATE SET address = excluded.address, due = excluded.due,"
                    " amount = excluded.amount, reserved_until = excluded.reserved_until",
                    session_id, network, address, due, amount, order_id, merchant_id, livemode,
                    expires_at + RESERVED_AFTER_EXPIRY)
                amounts[network] = amount
    return amounts


async def reserved(pool: asyncpg.Pool, network: str, now: datetime) -> list[Reservation]:
    """Every amount still reserved on a network: what a scan matches transfers against."""
    rows = await pool.fetch(
        "SELECT session_id, order_id, merchant_id, livemode, network, address, amount FROM unique_amounts"
        " WHERE network = $1 AND reserved_until > $2", network, now)
    return [Reservation(**dict(r)) for r in rows]
