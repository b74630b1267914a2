"""The EVM adapter over HTTP against a real JSON-RPC node (ganache), built by open_adapter as in production.

Besides the adapter contract every family passes, this covers what only a node over HTTP shows: eth_getLogs over
block ranges, an 18-decimal token, a reorganisation (evm_snapshot, evm_revert) and a node that answers 429 or 5xx
before it answers again.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import aiohttp
import pytest
from eth_account.signers.local import LocalAccount

from chain_watchers.base import TokenTransfer
from chain_watchers.clients import open_adapter
from chain_watchers.evm import EvmAdapter
from chain_watchers.registry import Stablecoin
from testkit.evm_node import CONFIRMATIONS, Chain, Proxy, network, node_behind_proxy

from .contract import AdapterContract, Sent


class GanacheWorld:
    """A fresh ganache per test with a 6-decimal and an 18-decimal stablecoin, seen through the proxy."""

    def __init__(self, chain: Chain, proxy: Proxy) -> None:
        self.chain, self.proxy = chain, proxy

    async def start(self, proxy_url: str) -> GanacheWorld:
        self.usdt = await self.chain.deploy("USDT", 6)
        self.bsc_usdt = await self.chain.deploy("USDT", 18)  # BSC's Binance-Peg USDT has 18 decimals
        self.sender, self.recipient, self.stranger = [await self.chain.account() for _ in range(3)]
        for token in (self.usdt, self.bsc_usdt):
            await self.chain.mint(token, self.sender.address, 10**30)
        coins = (Stablecoin(address=self.usdt.address, symbol="USDT", decimals=6),
                 Stablecoin(address=self.bsc_usdt.address, symbol="USDT", decimals=18))
        adapter = await open_adapter(network(proxy_url, *coins))
        assert isinstance(adapter, EvmAdapter)
        self.adapter = adapter
        return self

    async def send(self, to: LocalAccount, units: int, sender: LocalAccount | None = None, token=None) -> str:
        return await self.chain.transfer(token or self.usdt, sender or self.sender, to.address, units)

    def moved(self, to: LocalAccount, units: int, token=None, ordinal: int = 0) -> TokenTransfer:
        return TokenTransfer(token_address=(token or self.usdt).address, from_address=self.sender.address,
                             to_address=to.address, amount_base_units=units, ordinal=ordinal)

    async def finalized_transfer(self) -> Sent:
        tx_hash = await self.send(self.recipient, 123_456_789)
        await self.advance(CONFIRMATIONS)
        return Sent(tx_hash, (self.moved(self.recipient, 123_456_789),), depth=CONFIRMATIONS + 1)

    async def failed_transfer(self) -> Sent:
        return Sent(await self.send(self.recipient, 5, sender=self.stranger), ())  # holds no USDT: reverts

    async def shallow_transfer(self) -> Sent:
        tx_hash = await self.send(self.recipient, 42_000_000)
        return Sent(tx_hash, (self.moved(self.recipient, 42_000_000),), depth=1)

    async def transfer_to_someone_else(self) -> Sent:
        tx_hash = await self.send(self.stranger, 10_000_000)
        return Sent(tx_hash, (self.moved(self.stranger, 10_000_000),), intended_recipient=self.recipient.address)

    def unknown(self) -> Sent:
        return Sent("0x" + secrets.token_hex(32), ())

    async def advance(self, blocks: int) -> None:
        await self.chain.mine(blocks)

    def respell(self, tx_hash: str) -> str:
        return "0x" + tx_hash[2:].upper()


@pytest.fixture
async def node() -> AsyncIterator[GanacheWorld]:
    async with node_behind_proxy() as (chain, proxy, proxy_url):
        world = await GanacheWorld(chain, proxy).start(proxy_url)
        try:
            yield world
        finally:
            await world.adapter.close()


class TestGanacheContract(AdapterContract):
    @pytest.fixture
    def world(self, node: GanacheWorld) -> GanacheWorld:
        return node


async def test_adapter_reads_the_node_over_json_rpc(node: GanacheWorld) -> None:
    sent = await node.finalized_transfer()
    node.proxy.calls.clear()
    await node.adapter.fetch(sent.tx_hash)
    assert node.proxy.methods() == ["eth_getTransactionReceipt", "eth_blockNumber"]
    assert node.proxy.calls[0]["params"] == [sent.tx_hash]


async def test_get_logs_reads_inclusive_ranges_of_stablecoin_transfers_to_the_recipients(node: GanacheWorld) -> None:
    start = await node.chain.head() + 1
    first = await node.send(node.recipient, 1_000_000)
    await node.send(node.stranger, 2_000_000)  # to an address nobody asked about
    second = await node.send(node.recipient, 3 * 10**18, token=node.bsc_usdt)
    other = await node.chain.deploy("DAI", 18)  # a token the network does not accept
    await node.chain.mint(other, node.sender.address, 10**18)
    await node.chain.transfer(other, node.sender, node.recipient.address, 10**18)
    end = await node.chain.head()
    node.proxy.calls.clear()

    seen = await node.adapter.transfers_to([node.recipient.address], start, end)
    assert [(s.tx_hash, s.transfer.token_address, s.transfer.amount_base_units) for s in seen] == [
        (first, node.usdt.address, 1_000_000), (second, node.bsc_usdt.address, 3 * 10**18)]
    assert [s.position for s in seen] == [start, start + 2]
    [call] = node.proxy.calls
    [query] = call["params"]
    assert call["method"] == "eth_getLogs"
    assert (int(query["fromBlock"], 16), int(query["toBlock"], 16)) == (start, end)
    # Both ends are inclusive: ranges that meet at a block neither skip nor repeat it.
    halves = (await node.adapter.transfers_to([node.recipient.address], start, start)
              + await node.adapter.transfers_to([node.recipient.address], start + 1, end))
    assert halves == seen


async def test_eighteen_decimal_amounts_arrive_exact(node: GanacheWorld) -> None:
    units = 10 * 10**18 + 1  # ten dollars and one wei: beyond any float's precision
    tx_hash = await node.send(node.recipient, units, token=node.bsc_usdt)
    seen = await node.adapter.fetch(tx_hash)
    assert seen.transfers == (node.moved(node.recipient, units, token=node.bsc_usdt),)


@pytest.mark.parametrize("status", [429, 502, 503])
async def test_a_node_error_is_retried_after_a_pause_and_then_read(node: GanacheWorld, status: int) -> None:
    """web3's HTTP client retries read calls 5 times, pausing 0.125 s, doubling (it does not read Retry-After)."""
    sent = await node.finalized_transfer()
    node.proxy.faults += [status, status]
    loop = asyncio.get_running_loop()
    started = loop.time()
    seen = await node.adapter.fetch(sent.tx_hash)
    assert (seen.success, seen.final, seen.transfers) == (True, True, sent.expected)
    assert node.proxy.refused == [status, status]
    assert loop.time() - started >= 0.125 + 0.25


async def test_a_node_that_keeps_failing_raises_once_the_client_gives_up(node: GanacheWorld) -> None:
    sent = await node.finalized_transfer()
    node.proxy.faults += [503] * 5
    with pytest.raises(aiohttp.ClientResponseError) as raised:
        await node.adapter.fetch(sent.tx_hash)
    assert (raised.value.status, node.proxy.refused) == (503, [503] * 5)
    assert (await node.adapter.fetch(sent.tx_hash)).final is True  # the watcher's next try, after its own pause


async def test_a_reorganisation_moves_the_transaction_and_its_confirmations_restart(node: GanacheWorld) -> None:
    """evm_revert takes the block away; the same signed transaction lands in another block of a longer branch."""
    fork = await node.chain.snapshot()
    raw = await node.chain.sign(node.sender, node.usdt.functions.transfer(node.recipient.address, 5_000_000))
    tx_hash = await node.chain.send_raw(raw)
    await node.advance(1)
    before = await node.adapter.fetch(tx_hash)
    assert (before.confirmations, before.final) == (2, False)

    await node.chain.revert(fork)
    gone = await node.adapter.fetch(tx_hash)
    assert (gone.found, gone.block_ref) == (False, None)

    await node.advance(2)  # the other branch, two blocks without the payment
    assert await node.chain.send_raw(raw) == tx_hash
    after = await node.adapter.fetch(tx_hash)
    assert (after.block_ref, after.confirmations, after.final) == (str(int(before.block_ref) + 2), 1, False)
    assert after.transfers == before.transfers == (node.moved(node.recipient, 5_000_000),)
    await node.advance(CONFIRMATIONS - 1)
    assert (await node.adapter.fetch(tx_hash)).final is True
