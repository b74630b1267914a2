"""The EVM watcher moves with the chain: ganache announces each block over a websocket (eth_subscribe "newHeads"),
the watcher passes over the network when one arrives, and a payment is checked again only at the height that
completes its depth. The watchers here have an interval and a recheck time of an hour, so only heads can move them,
and ask for DEPTH confirmations, so blocks below the depth are seen to pass.
A subscription dropped by its endpoint comes back by itself and catches up on the blocks it missed."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator

import msgspec
import pytest
from aiohttp.test_utils import TestServer

from chain_watchers import store
from chain_watchers.clients import open_adapter
from chain_watchers.runner import Watcher
from common import money
from testkit.evm_node import WsProxy
from tests.support.waiting import until
from tests.watchers import api
from tests.watchers.ganache_shop import SLUG, Ganache, GanacheShop, ganache_network

HOUR = 3600.0
DEPTH = 6


@pytest.fixture(scope="module")
async def ganache() -> AsyncIterator[Ganache]:
    async with ganache_network() as node:
        yield node


@pytest.fixture
async def endpoint(ganache: Ganache) -> AsyncIterator[tuple[WsProxy, str]]:
    """The node's websocket behind a proxy the test can take down: (proxy, ws URL)."""
    proxy = WsProxy(ganache.proxy.node_url)
    async with TestServer(proxy.app()) as server:
        yield proxy, str(server.make_url("/")).replace("http", "ws", 1)


@pytest.fixture(params=["subscribed", "polled"])
async def following(request, stack, merchant, watchers, ganache: Ganache,
                    endpoint) -> AsyncIterator[tuple[GanacheShop, Watcher]]:
    """A merchant receiving on ganache, and a watcher on its own loop that only heads can move: announced over the
    websocket, or read every block time where the registry names no websocket."""
    shop = await GanacheShop(stack, merchant, ganache, watchers).start()
    if request.param == "subscribed":
        network = msgspec.structs.replace(ganache.network, ws_url=endpoint[1], confirmations=DEPTH)
    else:
        network = msgspec.structs.replace(ganache.network, block_time_s=0.2, confirmations=DEPTH)
    watcher = watchers("evm", (network,), open_adapter, interval_s=HOUR, recheck_s=HOUR, min_pass_s=0,
                       head_poll_s=0.2, backoff_base_s=0.1, backoff_max_s=1)
    stop = asyncio.Event()
    running = asyncio.create_task(watcher.run(stop))
    await until(lambda: SLUG in watcher.heads.latest, "the first head")
    yield shop, watcher
    stop.set()
    await running


def receipts(ganache: Ganache, tx_hash: str) -> int:
    return sum(1 for call in ganache.proxy.calls
               if call["method"] == "eth_getTransactionReceipt" and call["params"][0] == tx_hash)


async def paid(shop: GanacheShop, order_id: str) -> bool:
    return (await shop.order(order_id))["status"] == "PAID"


async def test_a_payment_is_checked_again_only_by_the_block_that_completes_its_depth(following, ganache) -> None:
    shop, _watcher = following
    created = await shop.checkout("10.00")
    tx_hash = await shop.pay("10.00")  # ganache mines it at once: its block is the new head
    await shop.report(created["session_key"], tx_hash)
    await shop.chain.mine(1)  # the pass this head wakes reads the reported attempt: 2 blocks deep
    await until(lambda: _confirming(shop, tx_hash), "the attempt is seen in its block")
    assert (await shop.attempt(tx_hash))["confirmations"] == 2
    checks = receipts(ganache, tx_hash)

    # Each block below the depth wakes a pass (a new head: the scan cursor follows it, since no amount is reserved),
    # but the attempt is not fetched again until its depth.
    for _ in range(DEPTH - 3):
        await shop.chain.mine(1)
        edge = await shop.chain.head() - DEPTH + 1
        await until(functools.partial(_cursor_at, shop, edge), "a pass over the new head")
        assert receipts(ganache, tx_hash) == checks
    assert not await paid(shop, created["order_id"])

    await shop.chain.mine(1)
    await until(lambda: paid(shop, created["order_id"]), "PAID once the depth is reached", timeout=5)
    assert receipts(ganache, tx_hash) == checks + 1
    assert await api.events(shop.stack.pool, created["order_id"]) == api.SETTLED


async def _cursor_at(shop: GanacheShop, edge: int) -> bool:
    async with shop.stack.pool.acquire() as conn:
        return await store.cursor(conn, SLUG) == edge


async def _confirming(shop: GanacheShop, tx_hash: str) -> bool:
    return (await shop.attempt(tx_hash))["status"] == "confirming"


@pytest.mark.parametrize("following", ["subscribed"], indirect=True)
async def test_a_dropped_subscription_comes_back_and_catches_up_on_the_blocks_it_missed(following, endpoint) -> None:
    shop, watcher = following
    assert watcher.heads.subscribed[SLUG] is True
    proxy, _url = endpoint
    created = await shop.checkout("10.00")
    amount = await api.unique_amount(shop.stack.pool, shop.client, created, SLUG, shop.wallet.address)
    await proxy.down()
    await until(lambda: watcher.heads.subscribed.get(SLUG) is False, "the watcher notices the loss")

    # Paid by its unique amount (no report) and buried at its depth while no head reaches the watcher.
    await shop.pay(money.from_base_units(amount, 6))
    await shop.chain.mine(DEPTH)
    # The watcher, alive and trying its subscription again after the blocks were mined, has passed over nothing.
    refused = proxy.refused
    await until(lambda: proxy.refused >= refused + 2, "the watcher asks for its subscription again, twice")
    assert not await paid(shop, created["order_id"])

    connections = proxy.connections
    proxy.up()
    await until(lambda: paid(shop, created["order_id"]), "PAID after the subscription is back", timeout=10)
    assert proxy.connections > connections
    assert watcher.heads.subscribed[SLUG] is True
    assert await api.events(shop.stack.pool, created["order_id"]) == api.SETTLED
