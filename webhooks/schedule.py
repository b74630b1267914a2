"""When to try a failed delivery again (pure): exponential backoff with jitter for about three days."""

from __future__ import annotations

from datetime import datetime, timedelta

from common.backoff import Jitter, exponential, uniform_jitter

FIRST_RETRY = timedelta(minutes=1)
LONGEST_WAIT = timedelta(hours=12)
# A delivery still failing this long after its first attempt is given up; an endpoint whose attempts
# have all failed for this long is disabled. Without jitter this makes 16 attempts over 77 hours.
GIVE_UP_AFTER = timedelta(days=3)


def wait(failures: int, jitter: Jitter = uniform_jitter) -> timedelta:
    """The wait after the n-th failed attempt of a round: 1 min, 2, 4, ... doubling up to 12 h."""
    return exponential(failures, FIRST_RETRY, LONGEST_WAIT, jitter)


def next_attempt(failures: int, round_started_at: datetime, now: datetime,
                 jitter: Jitter = uniform_jitter) -> datetime | None:
    """The next attempt after a failure at `now`, or None once the round has failed for GIVE_UP_AFTER."""
    if now - round_started_at >= GIVE_UP_AFTER:
        return None
    return now + wait(failures, jitter)


def retryable(status_code: int | None) -> bool:
    """Network errors, timeouts, 3xx and 5xx are retried; a 4xx is the receiver's final word, but
    408 (timeout) and 429 (slow down) ask for another try."""
    return status_code is None or not 400 <= status_code < 500 or status_code in (408, 429)


def nominal_table() -> list[timedelta]:
    """Offsets from the first attempt of every attempt without jitter (the documented table)."""
    offsets, at, failures = [timedelta(0)], timedelta(0), 0
    while at < GIVE_UP_AFTER:
        failures += 1
        at += wait(failures, lambda: 1.0)
        offsets.append(at)
    return offsets
