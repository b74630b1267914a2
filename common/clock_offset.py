"""How far this process's clock is from Redis's `TIME`, the clock that stamps every stream entry id.

Every process that stamps or checks time measures the offset at start and every CHECK_EVERY_S, exports it as
`clock_offset_seconds`, and while it is beyond the bound (OFFSET_SHARE of COMMAND_MAX_SKEW_S, 30 s by default)
takes no work: an actor worker holds no partition lease, a web process answers `/readyz` 503 naming the clock,
the scheduler, the watchers and the card refund sender skip their passes. A worker whose own clock is off would
otherwise refuse every command it reads as "from the future"; one that stands aside leaves them to a healthy
worker. Redis's clock is the reference: every process compares itself with the same one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Protocol

from common import faults
from common.metrics import CLOCK_OFFSET

log = logging.getLogger(__name__)
# The bound leaves most of COMMAND_MAX_SKEW_S to what it is for: a command's time against its entry's, and an
# entry's against its reader's, with a healthy clock on either side.
OFFSET_SHARE = 0.1
CHECK_EVERY_S = 5.0


class Timed(Protocol):
    """A Redis client: `TIME` answers (seconds, microseconds)."""

    async def time(self) -> tuple[int, int]: ...


def bound_s(command_max_skew_s: float) -> float:
    return command_max_skew_s * OFFSET_SHARE


class ClockOffset:
    """This process's clock against Redis's; `within` stays True until a measurement says otherwise."""

    def __init__(self, redis: Timed, process: str, limit_s: float, clock: Callable[[], float] = time.time):
        self.redis, self.process, self.limit_s, self.clock = redis, process, limit_s, clock
        self.offset_s = 0.0  # this clock minus Redis's: positive when ahead
        self.within = True

    async def check(self) -> bool:
        """Measure once (the round trip's midpoint against Redis's answer); True when within the bound."""
        before = self.clock()
        seconds, micros = await self.redis.time()
        after = self.clock()
        self.offset_s = (before + after) / 2 - (seconds + micros / 1_000_000)
        CLOCK_OFFSET.set(self.offset_s)
        within = abs(self.offset_s) <= self.limit_s
        if within != self.within:
            if within:
                log.warning("%s: the clock is back within %g s of Redis's (%s); taking work again", self.process,
                            self.limit_s, self.describe())
            else:
                log.error("%s: the clock is %s, beyond %g s: taking no work until it is within (check NTP)",
                          self.process, self.describe(), self.limit_s)
        self.within = within
        return within

    def describe(self) -> str:
        direction = "ahead of" if self.offset_s > 0 else "behind"
        return f"{abs(self.offset_s):.1f} s {direction} Redis's TIME"

    def verdict(self) -> str:
        """A readiness check's answer: "ok", or what is wrong with the clock."""
        return "ok" if self.within else f"clock {self.describe()}, beyond {self.limit_s:g} s"

    def shared_ms(self) -> int:
        """Now on Redis's clock, as this process last measured it, in milliseconds."""
        return int((self.clock() - self.offset_s) * 1000)

    async def keep_checked(self, stop: asyncio.Event, every_s: float = CHECK_EVERY_S) -> None:
        """Measure until `stop`; a measurement Redis does not answer keeps the last verdict."""
        while not stop.is_set():
            try:
                await self.check()
            except faults.UNAVAILABLE as exc:
                log.debug("%s: clock offset not measured (%r)", self.process, exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)
