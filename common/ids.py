"""Identifiers: random ones, and ones derived from an Idempotency-Key so a retry names the same objects.

An id the service makes begins with the time it was made, in milliseconds (12 hex digits), then its random or
derived part. Every table's primary key and most of its unique indexes are these ids: time-ordered, a new row lands
at the right edge of each index, on pages already in memory, instead of on a random page of an index that years of
orders have made far larger than the buffer cache (docs/architecture.md, Ids begin with their time). A derived
id's time must be the same on every retry, so its caller names it: the signed timestamp, the deriving id's own
time. A keyed request's command id has none (keyed_command_id); the other ids of a keyed request begin with the time
it was sent, and differ from a retry's in that part alone (same_but_time).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

TIME_DIGITS = 12  # hex digits of milliseconds since 1970: enough until the year 10889
KEYED_COMMAND_BYTES = 16


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


def keyed_command_id(seed: str, key: bytes) -> str:
    """The command id of a keyed request: derived from its key alone, with no time part, so that every retry of the
    key names the same command whenever it is sent, and the order actor's record of that command answers it (even
    after Redis lost everything). Longer than ids of old without a time, so the two are told apart."""
    return derived_id("cmd", seed, "command", KEYED_COMMAND_BYTES, key)


def is_keyed_command(command_id: str) -> bool:
    return len(command_id.rpartition("_")[2]) == 2 * KEYED_COMMAND_BYTES


def same_but_time(a: str, b: str) -> bool:
    """Whether two ids differ in their time part alone: what a keyed request made and what its retry, sent at another
    time, would have made (the same prefix, seed and purpose)."""
    prefix_a, _, body_a = a.rpartition("_")
    prefix_b, _, body_b = b.rpartition("_")
    return (prefix_a == prefix_b and len(body_a) == len(body_b) > TIME_DIGITS
            and body_a[TIME_DIGITS:] == body_b[TIME_DIGITS:])


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
