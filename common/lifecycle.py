"""The life of a process's resources, written once: what every process opens from its settings (PostgreSQL pool,
Redis client, key names, vault) and closes in the reverse order, how it waits for them to answer, and the stop
signal a worker process drains on.

Opening connects to nothing: a process started while PostgreSQL or Redis is away serves its probes (`/readyz`
503 naming the dependency) and waits with `Wired.start`, which says so once in its log and tries again with
backoff, instead of ending."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

import asyncpg

from common import backoff, clock_offset, db, faults, probes
from common.clock_offset import ClockOffset
from common.config import Settings
from common.secrets import Vault, master_keys
from streams import connection
from streams.names import Keys

log = logging.getLogger(__name__)
PROBE_TIMEOUT_S = 2.0
FIRST_WAIT_S, LONGEST_WAIT_S = 0.5, 5.0
T = TypeVar("T")


@dataclass
class Wired:
    settings: Settings
    pool: asyncpg.Pool
    redis: connection.Client
    keys: Keys = field(init=False)

    def __post_init__(self) -> None:
        self.keys = Keys(self.settings.redis_prefix, self.settings.partitions)

    @cached_property
    def vault(self) -> Vault:
        # Opened on first use: with no configured key it reads (or makes) the data folder's key file, which the
        # processes that hold no secrets (scheduler, watchers, actors) have no business touching.
        return vault(self.settings)

    def clock(self, process: str) -> ClockOffset:
        """The process's clock against Redis's, bounded by a share of COMMAND_MAX_SKEW_S (common/clock_offset.py)."""
        return ClockOffset(self.redis, process, clock_offset.bound_s(self.settings.command_max_skew_s))

    @asynccontextmanager
    async def measured(self, process: str, stop: asyncio.Event) -> AsyncIterator[ClockOffset | None]:
        """The process's probes (PostgreSQL, Redis, its clock) on METRICS_PORT while the block runs. The block gets
        the clock once both dependencies answer and it is measured, and it is measured again every few seconds
        until `stop`; it gets None when `stop` came first."""
        offset = self.clock(process)
        checks = dict(probes.basics(self.pool, self.redis), clock=probes.clock(offset))
        async with probes.serving(process, self.settings.host, self.settings.metrics_port, checks):
            if not (await self.start(process, stop, offset.check))[0]:
                yield None
                return
            measuring = asyncio.create_task(offset.keep_checked(stop))
            try:
                yield offset
            finally:
                await measuring

    async def start(self, process: str, stop: asyncio.Event,
                    start: Callable[[], Awaitable[T]] | None = None) -> tuple[bool, T | None]:
        """Once PostgreSQL and Redis both answer, run `start` (what the process does before serving), and again
        whenever a dependency fails it. Waiting is said once, and so is the end of it. (False, None) when `stop`
        came first."""
        failures = 0
        while not stop.is_set():
            try:
                await self._reach()
                started = await start() if start is not None else None
            except _Away as away:
                failures += 1
                if failures == 1:
                    log.warning("%s: waiting for %s (%r); retrying with backoff", process, away.name, away.error)
            except faults.UNAVAILABLE as exc:
                failures += 1
                if failures == 1:
                    log.warning("%s: a dependency failed the start (%r); retrying with backoff", process, exc)
            else:
                if failures:
                    log.warning("%s: PostgreSQL and Redis answer; starting", process)
                return True, started
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), backoff.exponential(failures, FIRST_WAIT_S, LONGEST_WAIT_S))
        return False, None

    async def _reach(self) -> None:
        for name, probe in (("PostgreSQL", lambda: self.pool.fetchval("SELECT 1")), ("Redis", self.redis.ping)):
            try:
                async with asyncio.timeout(PROBE_TIMEOUT_S):
                    await probe()
            except faults.UNAVAILABLE as exc:
                raise _Away(name, exc) from exc


class _Away(Exception):
    def __init__(self, name: str, error: BaseException) -> None:
        super().__init__(name)
        self.name, self.error = name, error


def vault(settings: Settings) -> Vault:
    return Vault(*master_keys(settings.master_key, settings.data_dir))


@asynccontextmanager
async def opened(settings: Settings, *, pool_min: int = 0, pool_max: int = 10,
                 server_settings: dict[str, str] | None = None,
                 redis_connections: int | None = None) -> AsyncIterator[Wired]:
    """With the default `pool_min` of 0 nothing connects here: the pool and the Redis client connect on first use,
    so a process opens them while PostgreSQL or Redis is away (the benchmark's peer opens its pool at once)."""
    pool = await db.connect(settings.database_url, pool_min, pool_max, server_settings, settings.database_timeout_s)
    try:
        redis = connection.connect(settings.redis_url, redis_connections)
        try:
            yield Wired(settings, pool, redis)
        finally:
            await redis.aclose()
    finally:
        await pool.close()


def stop_event() -> asyncio.Event:
    """Set by SIGINT or SIGTERM: the process finishes what it holds and ends."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
