"""Timers driven by apscheduler: due session TTLs and refund-request expiries become commands on
the actors' stream, through the same path as every other command.

The schedule itself lives in PostgreSQL (the read tables' expiry columns), so a restart loses none.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, NamedTuple

import asyncpg
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from actors import messages as m
from actors.bus import CommandBus
from common.clock import Clock, utcnow
from common.clock_offset import ClockOffset

log = logging.getLogger(__name__)
RESEND_AFTER_S = 30.0  # a command still unapplied after this long is sent again (dedupe makes it safe)


class Timer(NamedTuple):
    name: str
    query: str  # selects (key, order_id, merchant_id, livemode) of what is due at $1, at most $2 rows
    command: Callable[..., m.Command]


TIMERS = (
    Timer(
        "session-expiry",
        "SELECT session_id AS key, order_id, merchant_id, livemode FROM checkout_sessions"
        " WHERE status = 'OPEN' AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
        lambda key, **common: m.ExpireSession(session_id=key, **common),
    ),
    Timer(
        "refund-request-expiry",
        "SELECT token AS key, order_id, merchant_id, livemode FROM refund_tokens"
        " WHERE status = 'ACTIVE' AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
        lambda key, **common: m.ExpireRefundToken(token=key, **common),
    ),
)


class Timers:
    def __init__(self, pool: asyncpg.Pool, bus: CommandBus, clock: Clock = utcnow, offset: ClockOffset | None = None):
        self.pool = pool
        self.bus = bus
        self.clock = clock
        self.offset = offset  # while this clock is off, nothing is found due: its commands would be refused
        self._sent: dict[str, float] = {}

    async def sweep(self, limit: int = 1000) -> int:
        """Send a command for everything due now; returns how many were sent."""
        if self.offset is not None and not self.offset.within:
            return 0
        now = self.clock()
        sent = 0
        due: set[str] = set()
        for timer in TIMERS:
            for r in await self.pool.fetch(timer.query, now, limit):
                command_id = f"{timer.name}:{r['key']}"
                due.add(command_id)
                if time.monotonic() - self._sent.get(command_id, -RESEND_AFTER_S) < RESEND_AFTER_S:
                    continue
                # `at` is the clock that found it due, so the actor never sees it early.
                command = timer.command(r["key"], order_id=r["order_id"], merchant_id=r["merchant_id"],
                                        livemode=r["livemode"], at=now)
                await self.bus.send(m.Envelope(command_id=command_id, command=command))
                self._sent[command_id] = time.monotonic()
                sent += 1
        self._sent = {k: v for k, v in self._sent.items() if k in due}
        return sent


def start(timers: Timers, interval_s: float) -> AsyncIOScheduler:
    scheduler = AsyncIOScheduler()
    scheduler.add_job(timers.sweep, "interval", seconds=interval_s, max_instances=1, coalesce=True, id="timers")
    scheduler.start()
    return scheduler
