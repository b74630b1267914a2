"""Every long-running process started while PostgreSQL or Redis is away waits for it, says so once, answers
`/readyz` 503 naming it meanwhile, and serves once it is back (docs/operations.md, Metrics and probes)."""

from __future__ import annotations

import asyncio
import os
import secrets
import time

import aiohttp
import pytest
from cryptography.fernet import Fernet

from accounts import merchants
from common import db
from common.secrets import Vault
from testkit.signed import Signed
from tests.conftest import REDIS_URL
from tests.support.metrics import probe
from tests.support.processes import Processes, created, free_port
from tests.support.servers import OwnPostgres, OwnRedis
from tests.support.waiting import until

# Each process by the name it logs under, with its arguments.
PROCESSES = {"web": ("web",), "actors": ("actors",), "scheduler": ("scheduler",), "webhooks": ("webhooks",),
             "cards": ("cards",), "watch evm": ("watch", "--family", "evm")}
AWAY_FOR_S = 10
DEPENDENCY = {"postgres": "PostgreSQL", "redis": "Redis"}


@pytest.fixture
def own_postgres():
    server = OwnPostgres(free_port())
    yield server
    server.remove()


async def _readiness(http: aiohttp.ClientSession, urls: dict[str, str]) -> dict[str, tuple[int, dict]]:
    return {name: await probe(http, url + "/readyz") for name, url in urls.items()}


def _waiting_or_ended(procs: Processes, output, away: str) -> bool:
    """Each process has said it waits for the dependency, or has ended (which the test then names)."""
    return all(proc.poll() is not None or f"waiting for {DEPENDENCY[away]}" in (output / f"{name}.err").read_text()
               for name, proc in procs.procs.items())


@pytest.mark.parametrize("away", ["postgres", "redis"])
async def test_every_process_started_while_a_dependency_is_away_becomes_ready_when_it_is_back(
        away, own_postgres, tmp_path):
    """PostgreSQL away: a server of the test's own, made and migrated, then stopped. Redis away: a redis-server of
    the test's own, not yet started."""
    own_redis = OwnRedis(free_port())
    own_postgres.start()
    await db.migrate(own_postgres.url())
    if away == "postgres":
        own_postgres.stop()
    master_key = Fernet.generate_key().decode()
    env = dict(os.environ, DATABASE_URL=own_postgres.url(), REDIS_PREFIX=f"aw{secrets.token_hex(3)}:",
               REDIS_URL=own_redis.url if away == "redis" else REDIS_URL, PARTITIONS="4", LEASE_TTL_MS="1500",
               SERVICE_MASTER_KEY=master_key, LOG_LEVEL="WARNING", WATCH_INTERVAL_S="3600")
    procs = Processes(env, "", tmp_path)
    try:
        urls = {}
        for name, args in PROCESSES.items():
            port = free_port()
            procs.env = dict(env, PORT=str(port), METRICS_PORT=str(port))
            procs.start(name.replace(" ", "-"), *args)
            urls[name] = f"http://127.0.0.1:{port}"
        started = time.monotonic()
        async with aiohttp.ClientSession() as http:
            await until(lambda: _waiting_or_ended(procs, tmp_path, away), f"each process waits for {DEPENDENCY[away]}",
                        timeout=30)
            for name, (status, body) in (await _readiness(http, urls)).items():
                assert status == 503 and body["checks"][away].startswith("unreachable"), (name, body)
            ended = [name for name, proc in procs.procs.items() if proc.poll() is not None]
            assert not ended, f"{ended} ended while {DEPENDENCY[away]} was away"

            # Away for AWAY_FOR_S in all: several rounds of each process's backoff, none of which may say more.
            await asyncio.sleep(max(0.0, AWAY_FOR_S - (time.monotonic() - started)))
            if away == "postgres":
                own_postgres.start()
            else:
                own_redis.start()
            back = time.monotonic()
            while True:
                ready = await _readiness(http, urls)
                if all(status == 200 for status, _ in ready.values()):
                    break
                assert time.monotonic() - back < 60, {n: b for n, (s, b) in ready.items() if s != 200}
                await asyncio.sleep(0.5)

            # Serving: a merchant's signed call is answered by the web process and the actors.
            pool = await db.connect(own_postgres.url(), min_size=1, max_size=2)
            try:
                pair = await merchants.create(pool, Vault(master_key.encode()), "Came back")
            finally:
                await pool.close()
            client = Signed(http, urls["web"], pair.public_key, pair.secret_key, pair.merchant_id)
            assert (await created(client, "after-the-wait"))["order"]["status"] == "PENDING"
    finally:
        procs.stop()
        own_redis.stop()
    for name in PROCESSES:
        log = (tmp_path / f"{name.replace(' ', '-')}.err").read_text()
        assert log.count(f"waiting for {DEPENDENCY[away]}") == 1, (name, log[-3000:])
