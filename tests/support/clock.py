"""A clock the tests move forward: a TTL passes in no wall time, and every part of the app sees the same instant."""

from __future__ import annotations

from datetime import datetime, timedelta

from common.clock import utcnow


class MovableClock:
    """The real time plus an offset that only grows within a test, so the times an order records never run
    backwards; each test that moved it gives the real time back at its end (tests/conftest.py), since the
    watchers, dispatchers and test code beside the stack read the real clock."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return utcnow() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)

    def reset(self) -> None:
        self.offset = timedelta(0)
