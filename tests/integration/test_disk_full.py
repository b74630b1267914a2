"""PostgreSQL's disk full for a while (a drill filled it for 10 s): the machine's fault, not the code's. The worker
retries its batches as after a lost connection and every command is applied once the disk has room, nothing set
aside and no order number lost; the log says so in one WARNING naming PostgreSQL, not in an ERROR with a traceback
per command, and dependency_faults_total counts each failed commit."""

from __future__ import annotations

import asyncio
import logging
import secrets

import asyncpg
import msgspec
import redis.asyncio as aioredis
from prometheus_client import REGISTRY

from actors.applier import BatchHooks
from actors.bus import CommandBus
from actors.worker import Worker
from common import faults
from streams.names import Keys
from tests.support.commands import create_order

FULL_COMMITS = 4


class DiskFullFor(BatchHooks):
    """The first `times` commits fail as PostgreSQL fails them when it cannot extend a file."""

    def __init__(self, times: int):
        self.left = times

    async def commit(self, statement) -> None:
        if self.left > 0:
            self.left -= 1
            statement.close()  # never sent
            raise asyncpg.DiskFullError('could not extend file "base/16384/16390": No space left on device')
        await statement


def _faults() -> float:
    return REGISTRY.get_sample_value("dependency_faults_total", {"dependency": "postgresql"}) or 0.0


async def test_a_full_disk_is_one_warning_and_every_command_is_applied_once_it_has_room(settings, pool, caplog,
                                                                                        monkeypatch):
    monkeypatch.setattr(faults, "_last_fault", {})  # no episode of another test under way
    keys = Keys(f"{settings.redis_prefix}full-{secrets.token_hex(3)}:", 2)
    redis = aioredis.Redis.from_url(settings.redis_url)
    bus = CommandBus(redis, keys, "test-full", timeout_s=30)
    worker = Worker(pool, redis, keys, "test-full", lease_ttl_ms=1500, lanes=2, hooks=DiskFullFor(FULL_COMMITS))
    merchant_id = f"mer_full_{secrets.token_hex(4)}"
    stop = asyncio.Event()
    before = _faults()
    await bus.start()
    running = asyncio.create_task(worker.run(stop))
    try:
        with caplog.at_level(logging.WARNING):
            replies = await asyncio.gather(*(bus.ask(create_order(merchant_id)) for _ in range(6)))
        set_aside = await redis.xlen(keys.dead_letters)
    finally:
        await bus.stop()
        stop.set()
        await running
        await redis.aclose()
    assert all(r.ok for r in replies), [r.error for r in replies if not r.ok]
    numbers = sorted(msgspec.json.decode(r.state)["order_number"] for r in replies)
    assert numbers == list(range(1001, 1007))  # the refused commits' numbers went to the next orders
    assert await pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1", merchant_id) == 6
    assert set_aside == 0
    assert _faults() - before == FULL_COMMITS
    # This worker's own lines: the session's other worker may meet a slow Redis meanwhile on a loaded box.
    told = [(r.levelno, r.name, r.getMessage()) for r in caplog.records
            if r.levelno >= logging.WARNING and "test-full" in r.getMessage()]
    assert [(level, name) for level, name, _ in told] == [(logging.WARNING, "actors.lane")], told
    assert "postgresql unavailable" in told[0][2] and "No space left on device" in told[0][2]
