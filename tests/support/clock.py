"""A clock the tests move forward: a TTL passes in no wall time, and every part of the app sees the same instant."""

from __future__ import annotations

from datetime import datetime, timedelta

from common.clock import utcnow


class MovableClock:
    """The real time plus an offset that only grows, so the times an order records never run backwards."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return utcnow() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)
