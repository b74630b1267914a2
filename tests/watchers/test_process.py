"""`service watch --family solana` as its own process: the Procfile entry confirms a refund and stops on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from aiohttp.test_utils import TestServer

from chain_watchers.runner import FAMILIES
from service import cli
from tests.chain.fake_solana_rpc import FINALIZED_DEPTH, Cluster, build_app
from tests.integration.helpers import order
from tests.watchers import api
from tests.watchers.solana_refund import refund_on


def test_cli_runs_a_watcher_per_family_the_runner_knows() -> None:
    assert cli.FAMILIES == FAMILIES
    assert cli.parser().parse_args(["watch", "--family", "ton"]).family == "ton"


async def test_watch_process_executes_a_refund_and_stops_on_sigterm(stack, merchant) -> None:
    cluster = Cluster()
    order_id, refund_id, signature = await refund_on(cluster, merchant, "10.00", depth=FINALIZED_DEPTH)

    settings = stack.settings
    async with TestServer(build_app(cluster)) as server:
        url = str(server.make_url("/"))
        env = dict(os.environ, DATABASE_URL=settings.database_url, REDIS_URL=settings.redis_url,
                   REDIS_PREFIX=settings.redis_prefix, PARTITIONS=str(settings.partitions), SOLANA_RPC_URL=url,
                   SOLANA_DEVNET_RPC_URL=url, WATCH_INTERVAL_S="0.2", WATCH_RECHECK_S="0")
        process = await asyncio.create_subprocess_exec(sys.executable, "-m", "service", "watch", "--family", "solana",
                                                       env=env, stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.PIPE)
        try:
            # A loaded machine takes seconds to import the chain clients; the watcher then needs one tick.
            status = await _status_once(stack.pool, order_id, "REFUNDED", timeout=60)
        finally:
            process.send_signal(signal.SIGTERM)
            output, errors = await asyncio.wait_for(process.communicate(), 30)
    assert status == "REFUNDED", errors.decode()[-3000:]
    assert process.returncode == 0, errors.decode()[-3000:]
    assert b"watch: solana watcher on solana, solana-devnet" in output
    assert (await api.read_refund(merchant, refund_id))["execution"]["tx_hash"] == signature
    assert (await order(merchant, order_id))["amount_refunded"] == "10.00"


async def _status_once(pool, order_id: str, wanted: str, timeout: float) -> str:
    """The order's status once it is `wanted` or the time is up; read from the database, as polling the API
    with a request signed twice in one second would be refused as a replay."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        status = await pool.fetchval("SELECT status FROM orders WHERE order_id = $1", order_id)
        if status == wanted or asyncio.get_running_loop().time() > deadline:
            return status
        await asyncio.sleep(0.2)
