"""Two `service watch --family solana` processes: one watches, the other stands by. When the holder's lock
connection is terminated (as a failover or pg_terminate_backend does), it stops at once and exactly one of the two
watches again within seconds, never both together, and the refund it was following executes once."""

from __future__ import annotations

import asyncio
import os
import time

import aiohttp
from aiohttp.test_utils import TestServer

from chain_watchers.runner import _LOCK, FAMILIES
from tests.chain.fake_solana_rpc import FINALIZED_DEPTH, Cluster, build_app
from tests.support.metrics import value
from tests.support.processes import Processes, free_port
from tests.support.waiting import until
from tests.watchers import api
from tests.watchers.solana_refund import refund_on

SAMPLE_EVERY_S = 0.05


async def _held(http: aiohttp.ClientSession, url: str) -> int:
    try:
        async with http.get(url + "/metrics") as resp:
            return int(value(await resp.text(), "lock_held"))
    except aiohttp.ClientConnectionError:
        return 0  # still importing its libraries


async def test_a_terminated_lock_connection_hands_the_family_to_exactly_one_watcher(stack, merchant, tmp_path):
    cluster = Cluster()
    order_id, refund_id, _signature = await refund_on(cluster, merchant, "10.00", depth=1)  # not yet final
    settings = stack.settings
    lock_id = _LOCK + FAMILIES.index("solana")
    async with TestServer(build_app(cluster)) as server, aiohttp.ClientSession() as http:
        rpc = str(server.make_url("/"))
        env = dict(os.environ, DATABASE_URL=settings.database_url, REDIS_URL=settings.redis_url,
                   REDIS_PREFIX=settings.redis_prefix, PARTITIONS=str(settings.partitions), SOLANA_RPC_URL=rpc,
                   SOLANA_DEVNET_RPC_URL=rpc, WATCH_INTERVAL_S="0.2", WATCH_RECHECK_S="0", LOG_LEVEL="WARNING")
        procs = Processes(env, "", tmp_path)
        urls = {}
        for name in ("first", "second"):
            port = free_port()
            procs.env = dict(env, METRICS_PORT=str(port))
            procs.start(name, "watch", "--family", "solana")
            urls[name] = f"http://127.0.0.1:{port}"
        samples: list[tuple[int, int]] = []

        async def held() -> dict[str, int]:
            return {name: await _held(http, url) for name, url in urls.items()}

        async def sample(stop: asyncio.Event) -> None:
            while not stop.is_set():
                samples.append(tuple((await held()).values()))
                await asyncio.sleep(SAMPLE_EVERY_S)

        stop = asyncio.Event()
        sampler = asyncio.create_task(sample(stop))
        try:
            await until(lambda: _one_holds(held), "one watcher holds the lock", timeout=60)
            holder = next(name for name, h in (await held()).items() if h)
            terminated = await stack.pool.fetchval(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                " AND objid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                lock_id)
            assert terminated
            cut, sampled_before_cut = time.monotonic(), len(samples)
            # The holder says it stopped (the other may take the lock at once: no moment of neither is promised),
            # and one of the two watches again.
            await until(lambda: _said(tmp_path / f"{holder}.err", "the lock's connection is gone"),
                        "the holder says it stopped", timeout=5)
            await until(lambda: _one_holds(held), "one watcher holds it again", timeout=10)
            handed_over_s = time.monotonic() - cut

            cluster.head += FINALIZED_DEPTH  # the refund's transfer is final now
            await until(lambda: _refunded(stack.pool, order_id), "the refund executed", timeout=30)
        finally:
            stop.set()
            await sampler
            procs.stop()

    assert handed_over_s < 10
    # Sampled throughout: one holder seen before the cut and again after it, never two at once.
    assert 1 in map(sum, samples[:sampled_before_cut]) and 1 in map(sum, samples[sampled_before_cut:])
    assert (1, 1) not in samples
    executed = await stack.pool.fetchval(
        "SELECT count(*) FROM events WHERE order_id = $1 AND type = 'payment.refund.executed'", order_id)
    assert executed == 1
    assert (await api.read_refund(merchant, refund_id))["status"] == "EXECUTED"


async def _one_holds(held) -> bool:
    return sum((await held()).values()) == 1


async def _said(log, line: str) -> bool:
    return log.exists() and line in log.read_text()


async def _refunded(pool, order_id: str) -> bool:
    return await pool.fetchval("SELECT status FROM orders WHERE order_id = $1", order_id) == "REFUNDED"
