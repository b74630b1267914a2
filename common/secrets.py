"""Secrets at rest and the keys derived for every other use.

The master key only encrypts (Fernet: AES-CBC + HMAC). Several master keys may be configured, newest first:
the first seals, any opens (MultiFernet), which is how a rotation runs without downtime (docs/operations.md).
Every other secret use (ids derived from Idempotency-Keys or signatures, CSRF tokens, sign-in forms, dashboard
sessions) takes its own key, derived with HKDF under its own label from a root kept sealed in PostgreSQL: a new
master key re-seals the root and leaves it, and everything derived from it, unchanged.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import NamedTuple

import asyncpg
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


class MasterKeyError(Exception):
    pass


def master_keys(configured: str, data_dir: str) -> list[bytes]:
    """The configured keys (SERVICE_MASTER_KEY, comma-separated, newest first), or for the embedded default those
    kept in the data folder, one a line (a first one is made there when none is)."""
    if configured:
        return [k.strip().encode() for k in configured.split(",") if k.strip()]
    path = Path(data_dir) / "master.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(Fernet.generate_key())
    return [line.strip() for line in path.read_bytes().splitlines() if line.strip()]


def add_master_key(data_dir: str) -> bytes:
    """A new key, first in the data folder's key file, the older ones kept after it to open what they sealed."""
    path = Path(data_dir) / "master.key"
    new = Fernet.generate_key()
    older = master_keys("", data_dir)
    tmp = path.with_suffix(".new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(b"\n".join([new, *older]) + b"\n")
    tmp.replace(path)
    return new


class Vault:
    def __init__(self, *keys: bytes):
        try:
            self._fernet = MultiFernet([Fernet(key) for key in keys])
        except (ValueError, TypeError):
            raise MasterKeyError("SERVICE_MASTER_KEY must be urlsafe base64 32-byte Fernet keys, comma-separated") from None

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise MasterKeyError("a secret does not decrypt under any configured master key") from None

    def reseal(self, sealed: str) -> str:
        """The same secret sealed under the first key."""
        try:
            return self._fernet.rotate(sealed.encode()).decode()
        except InvalidToken:
            raise MasterKeyError("a secret does not decrypt under any configured master key") from None


class DerivedKeys(NamedTuple):
    """One key per use, so no two uses can ever be made to sign each other's messages."""

    ids: bytes
    refund_form_csrf: bytes
    dashboard_signin: bytes
    dashboard_session: bytes
    receipts: bytes


def derive(root: bytes) -> DerivedKeys:
    def one(label: str) -> bytes:
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"service:{label}".encode()).derive(root)

    return DerivedKeys(*(one(label.replace("_", "-")) for label in DerivedKeys._fields))


DERIVATION_ROOT = "derivation"


async def derived_keys(pool: asyncpg.Pool, vault: Vault) -> DerivedKeys:
    """The keys derived from the service's root secret; the first process to ask makes the root."""
    sealed = await pool.fetchval(
        "INSERT INTO service_secrets (name, secret_enc) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING"
        " RETURNING secret_enc", DERIVATION_ROOT, vault.seal(secrets.token_hex(32)),
    ) or await pool.fetchval("SELECT secret_enc FROM service_secrets WHERE name = $1", DERIVATION_ROOT)
    return derive(vault.open(sealed).encode())


# Every column that holds a sealed secret: (table, key column, sealed column).
SEALED_COLUMNS = (
    ("api_keys", "public_key", "secret_enc"),
    ("webhook_endpoints", "endpoint_id", "secret_enc"),
    ("webhook_endpoints", "endpoint_id", "previous_secret_enc"),
    ("service_secrets", "name", "secret_enc"),
    ("card_accounts", "account_id", "secret_key_enc"),
    ("card_accounts", "account_id", "webhook_secret_enc"),
)


async def reseal_all(pool: asyncpg.Pool, vault: Vault) -> dict[str, int]:
    """Every stored secret sealed again under the first master key, in one transaction; counts by column."""
    counts: dict[str, int] = {}
    async with pool.acquire() as conn, conn.transaction():
        for table, key, column in SEALED_COLUMNS:
            rows = await conn.fetch(f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL FOR UPDATE")
            await conn.executemany(f"UPDATE {table} SET {column} = $2 WHERE {key} = $1",
                                   [(r[key], vault.reseal(r[column])) for r in rows])
            counts[f"{table}.{column}"] = len(rows)
    return counts
