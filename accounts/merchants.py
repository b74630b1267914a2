"""Merchants and their API keys: creation, lookup by public key, secret roll."""

from __future__ import annotations

import secrets

import asyncpg
import msgspec

from common.ids import random_id
from common.secrets import Vault


class Merchant(msgspec.Struct, frozen=True):
    merchant_id: str
    name: str


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    auto_approve_customer_refunds: bool = False
    receive_addresses: dict[str, str] = {}


class KeyPair(msgspec.Struct, frozen=True):
    merchant_id: str
    public_key: str
    secret_key: str
    livemode: bool


class ApiKey(msgspec.Struct, frozen=True):
    public_key: str
    merchant_id: str
    livemode: bool
    secret: str
    # The merchant's own rate limit; None takes the service's default.
    rate_limit_rps: int | None = None
    rate_limit_burst: int | None = None


class RateLimit(msgspec.Struct, frozen=True):
    merchant_id: str
    rps: int | None
    burst: int | None


def _mode(livemode: bool) -> str:
    return "live" if livemode else "test"


async def create(pool: asyncpg.Pool, vault: Vault, name: str, livemode: bool = False) -> KeyPair:
    merchant_id = random_id("mer")
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("INSERT INTO merchants (merchant_id, name) VALUES ($1, $2)", merchant_id, name)
        return await _insert_key(conn, vault, merchant_id, livemode)


async def add_key(pool: asyncpg.Pool, vault: Vault, merchant_id: str, livemode: bool) -> KeyPair:
    async with pool.acquire() as conn:
        return await _insert_key(conn, vault, merchant_id, livemode)


async def _insert_key(conn, vault: Vault, merchant_id: str, livemode: bool) -> KeyPair:
    public_key = f"pk_{_mode(livemode)}_{secrets.token_hex(16)}"
    secret_key = f"sk_{_mode(livemode)}_{secrets.token_hex(24)}"
    await conn.execute(
        "INSERT INTO api_keys (public_key, merchant_id, livemode, secret_enc) VALUES ($1, $2, $3, $4)",
        public_key,
        merchant_id,
        livemode,
        vault.seal(secret_key),
    )
    return KeyPair(merchant_id, public_key, secret_key, livemode)


async def roll(pool: asyncpg.Pool, vault: Vault, merchant_id: str, livemode: bool) -> KeyPair | None:
    """A new secret for the merchant's key of that mode; the old secret stops working."""
    secret_key = f"sk_{_mode(livemode)}_{secrets.token_hex(24)}"
    public_key = await pool.fetchval(
        "UPDATE api_keys SET secret_enc = $3, rolled_at = now()"
        " WHERE merchant_id = $1 AND livemode = $2 RETURNING public_key",
        merchant_id,
        livemode,
        vault.seal(secret_key),
    )
    return KeyPair(merchant_id, public_key, secret_key, livemode) if public_key else None


async def list_all(pool: asyncpg.Pool) -> list[dict]:
    rows = await pool.fetch(
        "SELECT m.merchant_id, m.name, m.created_at,"
        " coalesce(array_agg(k.public_key ORDER BY k.livemode) FILTER (WHERE k.public_key IS NOT NULL), '{}')"
        " AS public_keys FROM merchants m LEFT JOIN api_keys k USING (merchant_id)"
        " GROUP BY m.merchant_id ORDER BY m.created_at"
    )
    return [
        {
            "merchant_id": r["merchant_id"],
            "name": r["name"],
            "public_keys": list(r["public_keys"]),
            "created_at": r["created_at"].isoformat(),
        }
        for r in rows
    ]


async def lookup_key(pool: asyncpg.Pool, vault: Vault, public_key: str) -> ApiKey | None:
    row = await pool.fetchrow(
        "SELECT k.merchant_id, k.livemode, k.secret_enc, m.rate_limit_rps, m.rate_limit_burst"
        " FROM api_keys k JOIN merchants m USING (merchant_id) WHERE k.public_key = $1", public_key
    )
    if row is None:
        return None
    return ApiKey(public_key, row["merchant_id"], row["livemode"], vault.open(row["secret_enc"]),
                  row["rate_limit_rps"], row["rate_limit_burst"])


async def set_rate_limit(pool: asyncpg.Pool, merchant_id: str, rps: int | None, burst: int | None,
                         reset: bool = False) -> RateLimit | None:
    """Change what is given (or clear both with reset); the web processes see it within their key cache's life."""
    row = await pool.fetchrow(
        "UPDATE merchants SET rate_limit_rps = CASE WHEN $4 THEN NULL ELSE coalesce($2, rate_limit_rps) END,"
        " rate_limit_burst = CASE WHEN $4 THEN NULL ELSE coalesce($3, rate_limit_burst) END"
        " WHERE merchant_id = $1 RETURNING rate_limit_rps, rate_limit_burst",
        merchant_id, rps, burst, reset,
    )
    return RateLimit(merchant_id, row["rate_limit_rps"], row["rate_limit_burst"]) if row else None


async def get(pool: asyncpg.Pool, merchant_id: str) -> Merchant | None:
    row = await pool.fetchrow("SELECT merchant_id, name FROM merchants WHERE merchant_id = $1", merchant_id)
    return Merchant(row["merchant_id"], row["name"]) if row else None


_decode_settings = msgspec.json.Decoder(Settings).decode


async def settings(pool: asyncpg.Pool | asyncpg.Connection, merchant_id: str) -> Settings:
    raw = await pool.fetchval("SELECT settings FROM merchants WHERE merchant_id = $1", merchant_id)
    return _decode_settings(raw) if raw else Settings()


async def save_settings(pool: asyncpg.Pool | asyncpg.Connection, merchant_id: str, new: Settings) -> None:
    await pool.execute("UPDATE merchants SET settings = $2 WHERE merchant_id = $1", merchant_id,
                       msgspec.json.encode(new).decode())
