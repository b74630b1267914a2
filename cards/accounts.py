"""A merchant's card provider account per mode, its secrets sealed at rest like API keys."""

from __future__ import annotations

from datetime import datetime

import asyncpg
import msgspec

from common.ids import random_id
from common.secrets import Vault


class CardAccount(msgspec.Struct, frozen=True, kw_only=True):
    merchant_id: str
    livemode: bool
    provider: str
    publishable_key: str
    secret_key: str
    webhook_secret: str
    error_since: datetime | None = None  # while the provider refuses the account (see `refused`)


class KeyRefused(ValueError):
    """A key of the wrong kind (`code` invalid_key), or of the other mode (key_mode_mismatch): a test key pays only
    test orders, a live key only live ones."""

    def __init__(self, field: str, code: str, why: str) -> None:
        super().__init__(f"{field} {why}")
        self.field, self.code, self.why = field, code, why


# Stripe's key prefixes; `rk_` is a restricted secret key, which serves as well.
_PREFIXES = {"secret_key": ("sk_", "rk_"), "publishable_key": ("pk_",), "webhook_secret": ("whsec_",)}


def check_keys(livemode: bool, secret_key: str, publishable_key: str, webhook_secret: str) -> None:
    """Each key has its kind's prefix, and the two API keys are of the caller's mode."""
    mode = "live" if livemode else "test"
    for field, value in (("secret_key", secret_key), ("publishable_key", publishable_key),
                         ("webhook_secret", webhook_secret)):
        if not value.startswith(_PREFIXES[field]):
            raise KeyRefused(field, "invalid_key", f"must begin with {' or '.join(_PREFIXES[field])}")
    for field, value in (("secret_key", secret_key), ("publishable_key", publishable_key)):
        if value.split("_")[1] != mode:
            raise KeyRefused(field, "key_mode_mismatch", f"must be a {mode} key in {mode} mode")


async def load(db: asyncpg.Pool | asyncpg.Connection, vault: Vault, merchant_id: str,
               livemode: bool) -> CardAccount | None:
    row = await db.fetchrow(
        "SELECT provider, publishable_key, secret_key_enc, webhook_secret_enc, last_error_at FROM card_accounts"
        " WHERE merchant_id = $1 AND livemode = $2", merchant_id, livemode)
    if row is None:
        return None
    return CardAccount(merchant_id=merchant_id, livemode=livemode, provider=row["provider"],
                       publishable_key=row["publishable_key"], secret_key=vault.open(row["secret_key_enc"]),
                       webhook_secret=vault.open(row["webhook_secret_enc"]), error_since=row["last_error_at"])


async def both_modes(db: asyncpg.Pool | asyncpg.Connection, vault: Vault, merchant_id: str) -> list[CardAccount]:
    """The merchant's accounts of either mode: a provider webhook says its mode only once verified."""
    found = [await load(db, vault, merchant_id, livemode) for livemode in (False, True)]
    return [a for a in found if a is not None]


async def publishable_key(db: asyncpg.Pool | asyncpg.Connection, merchant_id: str, livemode: bool) -> str | None:
    """What the checkout page needs, without opening any secret."""
    return await db.fetchval("SELECT publishable_key FROM card_accounts WHERE merchant_id = $1 AND livemode = $2",
                             merchant_id, livemode)


async def connect(db: asyncpg.Pool | asyncpg.Connection, vault: Vault, account: CardAccount) -> None:
    await db.execute(
        "INSERT INTO card_accounts (account_id, merchant_id, livemode, provider, publishable_key, secret_key_enc,"
        " webhook_secret_enc) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (merchant_id, livemode) DO UPDATE SET"
        " provider = excluded.provider, publishable_key = excluded.publishable_key,"
        " secret_key_enc = excluded.secret_key_enc, webhook_secret_enc = excluded.webhook_secret_enc,"
        " connected_at = now(), last_error = NULL, last_error_at = NULL",
        random_id("cac"), account.merchant_id, account.livemode, account.provider, account.publishable_key,
        vault.seal(account.secret_key), vault.seal(account.webhook_secret))


async def disconnect(db: asyncpg.Pool | asyncpg.Connection, merchant_id: str, livemode: bool) -> None:
    await db.execute("DELETE FROM card_accounts WHERE merchant_id = $1 AND livemode = $2", merchant_id, livemode)


# An error episode: its start is kept while the provider goes on refusing (the staff notifier tells each episode
# once, by the account and that start), and its words are the latest.
async def refused(db: asyncpg.Pool | asyncpg.Connection, account: CardAccount, error: str, at: datetime) -> None:
    """The provider refused the account itself (cards.provider.AccountRefused)."""
    await db.execute(
        "UPDATE card_accounts SET last_error = $3, last_error_at = COALESCE(last_error_at, $4)"
        " WHERE merchant_id = $1 AND livemode = $2", account.merchant_id, account.livemode, error[:500], at)


async def worked(db: asyncpg.Pool | asyncpg.Connection, account: CardAccount) -> None:
    """A call with the account succeeded: its error episode, if it was in one, is over."""
    if account.error_since is not None:
        await db.execute("UPDATE card_accounts SET last_error = NULL, last_error_at = NULL"
                         " WHERE merchant_id = $1 AND livemode = $2", account.merchant_id, account.livemode)


async def error(db: asyncpg.Pool | asyncpg.Connection, merchant_id: str, livemode: bool) -> asyncpg.Record | None:
    """The account's error episode, if it is in one: `last_error` and `last_error_at` (for the settings screens)."""
    return await db.fetchrow("SELECT last_error, last_error_at FROM card_accounts WHERE merchant_id = $1"
                             " AND livemode = $2 AND last_error_at IS NOT NULL", merchant_id, livemode)
