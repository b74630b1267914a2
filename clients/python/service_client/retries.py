"""When to retry and how long to wait (pure): the same rules in the Python and Node libraries."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

RETRIED_STATUSES = frozenset({429, 503, 504})
MAX_RETRY_AFTER_S = 60.0     # a longer Retry-After is the service asking to stop for now: raise instead
INITIAL_DELAY_S = 0.5
MAX_DELAY_S = 8.0


def retryable(status: int | None, code: str | None) -> bool:
    """No answer, 429, 503, 504, or 409 because the same key's first request is still running; a write that was
    refused only because its signature had been seen (two identical requests in one second) changed nothing."""
    if status is None or status in RETRIED_STATUSES:
        return True
    return (status, code) in ((409, "idempotency_key_in_use"), (401, "signature_replayed"))


def retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after", "")
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def delay(retry_number: int, headers: Mapping[str, str], code: str | None, now: float,
          jitter: Callable[[], float] = random.random) -> float | None:
    """Seconds to wait before retry number `retry_number` (1, 2, ...), or None when the answer asks for a wait
    longer than a client should hold a request. Exponential, jittered in its upper half; a Retry-After is
    honoured as the least wait; a replayed signature waits for the next second, whose signature differs."""
    backoff = min(MAX_DELAY_S, INITIAL_DELAY_S * 2 ** (retry_number - 1)) * (0.5 + jitter() / 2)
    if code == "signature_replayed":
        return 1.0 - now % 1.0 + 0.01
    asked = retry_after(headers)
    if asked is None:
        return backoff
    if asked > MAX_RETRY_AFTER_S:
        return None
    return asked + 0.1 * jitter()  # never sooner than asked; a little later so that waiters do not all return at once
