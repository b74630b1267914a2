"""Identifiers: random ones, and ones derived from an Idempotency-Key so a retry names the same objects.

An id the service makes begins with the time it was made, in milliseconds (12 hex digits), then its random or
derived part. Every table's primary key and most of its unique indexes are these ids: time-ordered, a new row lands
at the right edge of each index, on pages already in memory, instead of on a random page of an index that years of
orders have made far larger than the buffer cache (docs/architecture.md, Ids begin with their time). A derived
id's time must be the same on every retry, so its caller names it: the signed timestamp, the key's first sighting,
the deriving id's own time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

TIME_DIGITS = 12  # hex digits of milliseconds since 1970: enough until the year 10889


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def random_id(prefix: str, nbytes: int = 12, at_ms: int | None = None) -> str:
    return f"{prefix}_{_time(now_ms() if at_ms is None else at_ms)}{secrets.token_hex(nbytes)}"


def secret_token(prefix: str, nbytes: int = 24) -> str:
    return f"{prefix}_{secrets.token_urlsafe(nbytes)}"


def derived_id(prefix: str, seed: str, what: str, nbytes: int = 12, key: bytes | None = None,
               at_ms: int | None = None) -> str:
    """The same id for the same seed, purpose and time. With a key (HMAC) nobody without it can compute the id from
    what a client sends (an Idempotency-Key, a signature); without one it follows from public facts alone. Without
    a time (a chain transfer's payment, found again by any watcher at any time) it has no time part."""
    message = f"{seed}\x00{what}".encode()
    digest = (hmac.new(key, message, hashlib.sha256) if key is not None else hashlib.sha256(message)).hexdigest()
    return f"{prefix}_{'' if at_ms is None else _time(at_ms)}{digest[: nbytes * 2]}"


def made_at(id_: str, nbytes: int = 12) -> int | None:
    """The time part of an id made with `nbytes` of random or derived part; None for an id made without one (by
    a release before time-ordered ids, or derived with no time)."""
    body = id_.rpartition("_")[2]
    if len(body) != TIME_DIGITS + 2 * nbytes:
        return None
    try:
        return int(body[:TIME_DIGITS], 16)
    except ValueError:
        return None


def _time(ms: int) -> str:
    return f"{ms:0{TIME_DIGITS}x}"
