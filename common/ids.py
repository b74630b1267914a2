"""Identifiers: random ones, and ones derived from an Idempotency-Key so a retry names the same objects."""

from __future__ import annotations

import hashlib
import secrets


def random_id(prefix: str, nbytes: int = 12) -> str:
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def secret_token(prefix: str, nbytes: int = 24) -> str:
    return f"{prefix}_{secrets.token_urlsafe(nbytes)}"


def derived_id(prefix: str, seed: str, what: str, nbytes: int = 12) -> str:
    digest = hashlib.sha256(f"{seed}\x00{what}".encode()).hexdigest()
    return f"{prefix}_{digest[: nbytes * 2]}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
