"""Process wiring written once: what every process opens from its settings (PostgreSQL pool, Redis client, key
names, vault) and closes in the reverse order, and the stop signal a worker process drains on."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property

import asyncpg

from common import db
from common.config import Settings
from common.secrets import Vault, master_keys
from streams import connection
from streams.names import Keys


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


def vault(settings: Settings) -> Vault:
    return Vault(*master_keys(settings.master_key, settings.data_dir))


@asynccontextmanager
async def opened(settings: Settings, *, pool_min: int = 2, pool_max: int = 10,
                 server_settings: dict[str, str] | None = None,
                 redis_connections: int | None = None) -> AsyncIterator[Wired]:
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
