"""Loops that outlive a failure (the actors' outbox sweep, the webhooks' ticks) never swallow it: a dependency
away is one warning an episode, a fault of the code is an ERROR with its traceback each time, and the loop goes on."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from actors.outbox import OutboxSweep
from common import faults
from webhooks.process import _guarded

FAILURES = [
    (RedisConnectionError("Redis away"), logging.WARNING, False),
    (ConnectionRefusedError("PostgreSQL away"), logging.WARNING, False),
    (KeyError("a bug"), logging.ERROR, True),
    (TypeError("a bug"), logging.ERROR, True),
]


@pytest.fixture(autouse=True)
def no_episode_under_way(monkeypatch):
    """Each case starts with no dependency in an episode of faults (they are counted per process)."""
    monkeypatch.setattr(faults, "_last_fault", {})


@pytest.mark.parametrize("error, level, traceback", FAILURES)
async def test_the_outbox_sweep_reports_its_failures_and_sweeps_again(caplog, error, level, traceback):
    stop, sweeps = asyncio.Event(), []

    async def sweep():
        sweeps.append(1)
        if len(sweeps) == 3:
            stop.set()
        raise error

    outbox = SimpleNamespace(name="w1", sweep=sweep)
    with caplog.at_level(logging.WARNING, logger="actors.outbox"):
        await asyncio.wait_for(OutboxSweep.keep_swept(outbox, stop, every_s=0.001), 5)
    assert len(sweeps) == 3
    records = [r for r in caplog.records if "outbox sweep failed" in r.getMessage()]
    # A bug says so each time; three faults of a dependency in a row are one episode, one warning.
    assert [(r.levelno, r.exc_info is not None) for r in records] == [(level, traceback)] * (3 if traceback else 1)


@pytest.mark.parametrize("error, level, traceback", FAILURES)
async def test_a_webhooks_tick_reports_its_failure(caplog, error, level, traceback):
    async def sweep():
        raise error

    with caplog.at_level(logging.WARNING, logger="webhooks.process"):
        await _guarded(sweep)()
    [record] = [r for r in caplog.records if "sweep failed" in r.getMessage()]
    assert (record.levelno, record.exc_info is not None) == (level, traceback)
