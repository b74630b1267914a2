"""Watcher fixtures: a command bus on the test stack's Redis, and watchers built on injected adapters."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable

import msgspec
import pytest
from aiohttp.test_utils import TestServer

from actors.bus import CommandBus
from chain_watchers.clients import open_adapter
from chain_watchers.registry import Network, Registry, load_registry
from chain_watchers.runner import Watcher
from chain_watchers.watch import AdapterFactory, WatchOptions
from tests.chain.fake_solana_rpc import Cluster, build_app
from tests.chain.test_evm import EvmWorld
from tests.watchers.evm_shop import EvmShop, use_local_token
from web.reads import networks

# Every row is due at every tick and a failing RPC is retried at once: tests step watchers by hand.
OPTIONS = WatchOptions(recheck_s=0, backoff_base_s=0, backoff_max_s=0, late_every=1)


@pytest.fixture
async def bus(stack, redis, keys) -> AsyncIterator[CommandBus]:
    bus = CommandBus(redis, keys, f"test-watch-{secrets.token_hex(4)}", stack.settings.reply_timeout_s)
    await bus.start()
    yield bus
    await bus.stop()


WatcherFactory = Callable[..., Watcher]


@pytest.fixture
async def watchers(pool, bus) -> AsyncIterator[WatcherFactory]:
    """make(family, networks, open_adapter, **options): a watcher on only these networks; all are closed at the end."""
    made: list[Watcher] = []

    def make(family: str, networks: tuple[Network, ...], open_adapter: AdapterFactory, **options) -> Watcher:
        watcher = Watcher(family, Registry(networks=networks), pool, bus, open_adapter=open_adapter,
                          options=msgspec.structs.replace(OPTIONS, **options))
        made.append(watcher)
        return watcher

    yield make
    for watcher in made:
        await watcher.close()


@pytest.fixture
async def shop(stack, merchant, watchers, monkeypatch) -> AsyncIterator[EvmShop]:
    """A fresh local chain with TestUSD, a merchant receiving on it, and an EVM watcher on only the `local` network."""
    chain = await EvmWorld().start()
    await forget_cursors(stack.pool, "local")
    use_local_token(monkeypatch, chain.token.address)
    yield await EvmShop(stack, merchant, chain, watchers).start()
    monkeypatch.undo()
    networks.registry.cache_clear()


@pytest.fixture
async def solana(watchers) -> AsyncIterator[tuple]:
    """(cluster, network, watcher): the local Solana JSON-RPC cluster as solana-devnet, and a watcher on it alone."""
    cluster = Cluster()
    async with TestServer(build_app(cluster)) as server:
        network = load_registry(env={"SOLANA_DEVNET_RPC_URL": str(server.make_url("/"))}).network("solana-devnet")
        yield cluster, network, watchers("solana", (network,), open_adapter)


async def forget_cursors(pool, network: str) -> None:
    """Each test runs a new chain under a shipped slug: a cursor another test's chain left means nothing on it."""
    await pool.execute("DELETE FROM chain_cursors WHERE network = $1", network)
