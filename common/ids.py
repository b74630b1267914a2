"""Identifiers: random ones, and ones derived from an Idempotency-Key so a retry names the same objects."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def random_id(prefix: str, nbytes: int = 12) -> str:
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def secret_token(prefix: str, nbytes: int = 24) -> str:
    return f"{prefix}_{secrets.token_urlsafe(nbytes)}"


def derived_id(prefix: str, seed: str, what: str, nbytes: int = 12, key: bytes | None = None) -> str:
    """The same id for the same seed and purpose. With a key (HMAC) nobody without it can compute the id from
    what a client sends (an Idempotency-Key, a signature); without one it follows from public facts alone."""
    message = f"{seed}\x00{what}".encode()
    digest = (hmac.new(key, message, hashlib.sha256) if key is not None else hashlib.sha256(message)).hexdigest()
    return f"{prefix}_{digest[: nbytes * 2]}"
