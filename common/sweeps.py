"""Periodic sweeps on apscheduler's AsyncIOScheduler, stopped so that a sweep in flight ends on its own."""

from __future__ import annotations

import asyncio
import contextlib

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_SUBMITTED
from apscheduler.schedulers.asyncio import AsyncIOScheduler


class Sweeps:
    """apscheduler's own shutdown cancels the runs in flight, and a run it had created but not yet started is then
    logged as a failed job with a CancelledError traceback: a clean stop that reads as a crash. Here a stop pauses
    the schedule (no new run) and waits for the runs in flight to end before shutting it down."""

    def __init__(self) -> None:
        self.scheduler = AsyncIOScheduler()
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.scheduler.add_listener(self._submitted, EVENT_JOB_SUBMITTED)
        self.scheduler.add_listener(self._ended, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)

    def _submitted(self, _event) -> None:
        self._in_flight += 1
        self._idle.clear()

    def _ended(self, _event) -> None:
        self._in_flight = max(0, self._in_flight - 1)
        if self._in_flight == 0:
            self._idle.set()

    def every(self, seconds: float, job, job_id: str) -> None:
        self.scheduler.add_job(job, "interval", seconds=seconds, max_instances=1, coalesce=True, id=job_id)

    def start(self) -> None:
        self.scheduler.start()

    async def stop(self, timeout_s: float = 15.0) -> None:
        """Past the timeout, what still runs is cancelled as apscheduler would."""
        self.scheduler.pause()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        self.scheduler.shutdown(wait=False)
