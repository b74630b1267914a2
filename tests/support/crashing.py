"""A worker process that dies at a named moment, as a kill -9 there would: `python -m tests.support.crashing
actors before_commit` (or commit_in_flight, after_commit), `... webhooks before_ack`. It runs the very process
wiring of `service actors` / `service webhooks`, with hooks that exit where they are told to."""

from __future__ import annotations

import asyncio
import os
import sys

from actors.applier import BatchHooks
from common import config
from service import processes
from webhooks.dispatcher import DispatchHooks

KILLED = 137


def command(process: str, crash_point: str = "") -> list[str]:
    """The command line of `service PROCESS`, or of one that dies at `crash_point`."""
    if crash_point:
        return [sys.executable, "-m", "tests.support.crashing", process, crash_point]
    return [sys.executable, "-m", "service", process]


def _die() -> None:
    os._exit(KILLED)


class CrashingBatch(BatchHooks):
    def __init__(self, point: str):
        self.point = point

    def before_commit(self) -> None:
        if self.point == "before_commit":
            _die()

    async def commit(self, statement) -> None:
        if self.point != "commit_in_flight":
            return await statement
        # The batch's statement sent and its answer unread: the worst moment to die.
        asyncio.ensure_future(statement)
        await asyncio.sleep(0.05)
        _die()

    def after_commit(self) -> None:
        if self.point == "after_commit":
            _die()


class CrashingDispatch(DispatchHooks):
    def __init__(self, point: str):
        self.point = point

    def before_ack(self) -> None:
        if self.point == "before_ack":
            _die()


def main(process: str, point: str) -> None:
    settings = config.load()
    if process == "actors":
        processes.run_actors(settings, CrashingBatch(point))
    elif process == "webhooks":
        processes.run_webhooks(settings, CrashingDispatch(point))
    else:
        raise SystemExit(f"no crashing {process} process")


if __name__ == "__main__":
    main(*sys.argv[1:3])
