"""The TRON watcher loop on tronpy's AsyncTron (built by open_adapter) against the local full-node HTTP API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestServer
from tronpy.keys import PrivateKey

from chain_watchers.clients import open_adapter
from chain_watchers.registry import load_registry
from tests.chain.fake_tron_node import SOLID_DEPTH, Chain, build_app
from tests.integration.helpers import order, quick
from tests.watchers import api
from tests.watchers.conftest import forget_cursors

USDT = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"  # the Nile test USDT networks.toml lists


def wallet() -> str:
    return PrivateKey.random().public_key.to_base58check_address()


@pytest.fixture
async def tron(pool, watchers) -> AsyncIterator[tuple]:
    chain = Chain()
    await forget_cursors(pool, "tron-nile")
    async with TestServer(build_app(chain)) as server:
        network = load_registry(env={"TRON_NILE_RPC_URL": str(server.make_url("/"))}).network("tron-nile")
        yield chain, network, watchers("tron", (network,), open_adapter)


async def test_watcher_executes_a_refund_once_its_block_is_solidified(merchant, tron) -> None:
    chain, network, watcher = tron
    order_id = await api.paid_order(merchant)
    buyer = wallet()
    refund_id = await api.refund(merchant, order_id, "3.00", network.slug, buyer, USDT)
    txid = chain.add_trc20_call(contract=USDT, owner=wallet(), to=buyer, amount=3_000_000, depth=4)
    await api.submit(merchant, refund_id, txid, network.slug, USDT)

    await watcher.run_once()
    [tx] = (await api.read_refund(merchant, refund_id))["transactions"]
    assert (tx["status"], tx["confirmations"], tx["required"]) == ("verifying", 4, SOLID_DEPTH)
    chain.head += SOLID_DEPTH - 4
    tick = await watcher.run_once()
    assert tick.refunds == 1
    assert (await api.read_refund(merchant, refund_id))["status"] == "EXECUTED"
    assert (await order(merchant, order_id))["status"] == "PARTIALLY_REFUNDED"


async def test_watcher_finds_a_payment_by_its_unique_amount_in_solidified_blocks(stack, merchant, tron) -> None:
    chain, network, watcher = tron
    receiving = wallet()
    await api.receive_on(merchant, network.slug, receiving)
    created = await quick(merchant, amount="10.00")
    quoted = await api.unique_amount(stack.pool, merchant, created, network.slug, receiving)
    txid = chain.add_trc20_call(contract=USDT, owner=wallet(), to=receiving, amount=quoted,
                                depth=SOLID_DEPTH + 2)
    chain.add_trc20_call(contract=USDT, owner=wallet(), to=receiving, amount=9_000_000, depth=SOLID_DEPTH + 2)

    tick = await watcher.run_once()
    assert (tick.found, tick.payments) == (1, 1)
    body = await order(merchant, created["order_id"])
    assert (body["status"], [p["tx_hash"] for p in body["payments"]]) == ("PAID", [txid])
    assert await api.events(stack.pool, created["order_id"]) == api.SETTLED
    scanned = {body["num"] for path, body in chain.requests if path.endswith("gettransactioninfobyblocknum")}
    assert max(scanned) == chain.solid  # nothing above the solidified block is read
    assert await stack.pool.fetchval(
        "SELECT position FROM chain_cursors WHERE network = $1 AND scope = ''", network.slug) == chain.solid
