"""A merchant receiving on a real JSON-RPC node (ganache, testkit/evm_node.py) through the public API, and the EVM
watcher reading that node over HTTP with the adapter open_adapter builds, as in production.

One ganache serves a test module: PaymentToken stablecoins deployed once, fresh keys per test (hashes never repeat
in the shared database). The web layer learns the network from NETWORKS_FILE: the shipped registry plus `ganache`.
"""

from __future__ import annotations

import contextlib
import pathlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from eth_account.signers.local import LocalAccount

from chain_watchers.clients import open_adapter
from chain_watchers.registry import DEFAULT_FILE, Network, Stablecoin
from chain_watchers.runner import Tick, Watcher
from common import money
from testkit.evm_node import Chain, Proxy, network, node_behind_proxy, registry_toml
from testkit.signed import Signed
from tests.integration.helpers import QUICK, order
from tests.watchers import api
from tests.watchers.conftest import forget_cursors
from web.reads import networks

SLUG = "ganache"
# name: (symbol, decimals, transfer fee in basis points, configured as the network's stablecoin)
TOKENS = {
    "usdt": ("USDT", 6, 0, True),
    "usdt18": ("USDT", 18, 0, True),  # as BSC's Binance-Peg USDT
    "fee": ("USDF", 6, 100, True),  # a fee-on-transfer token keeping 1 % of every transfer
    "lookalike": ("USDT", 6, 0, False),  # USDT's symbol and decimals at an address nobody configured
}


@dataclass
class Ganache:
    """The node, its tokens by name, and the network as an operator configures it (the look-alike is not in it)."""

    chain: Chain
    tokens: dict
    network: Network
    proxy: Proxy  # the HTTP JSON-RPC proxy the network's rpc_url names



@contextlib.asynccontextmanager
async def ganache_network() -> AsyncIterator[Ganache]:
    async with node_behind_proxy() as (chain, proxy, proxy_url):
        tokens = {name: await chain.deploy(symbol, decimals, fee) for name, (symbol, decimals, fee, _) in TOKENS.items()}
        coins = tuple(Stablecoin(address=tokens[name].address, symbol=symbol, decimals=decimals)
                      for name, (symbol, decimals, _, configured) in TOKENS.items() if configured)
        with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
            registry = pathlib.Path(folder) / "networks.toml"
            registry.write_text(DEFAULT_FILE.read_text(encoding="utf-8") + "\n" + registry_toml(proxy_url, *coins))
            patch.setenv("NETWORKS_FILE", str(registry))
            networks.registry.cache_clear()
            try:
                yield Ganache(chain, tokens, network(proxy_url, *coins), proxy)
            finally:
                networks.registry.cache_clear()


class GanacheShop:
    """One test's merchant: a buyer holding every token, the merchant's wallet (which pays refunds), a stranger."""

    def __init__(self, stack, client: Signed, node: Ganache, make_watcher) -> None:
        self.stack, self.client, self.node, self.chain = stack, client, node, node.chain
        self.watcher: Watcher = make_watcher("evm", (node.network,), open_adapter)

    async def start(self) -> GanacheShop:
        await forget_cursors(self.stack.pool, SLUG)
        self.buyer, self.wallet, self.stranger = [await self.chain.account() for _ in range(3)]
        for token in self.node.tokens.values():
            for holder in (self.buyer, self.wallet):
                await self.chain.mint(token, holder.address, 10**30)
        await api.receive_on(self.client, SLUG, self.wallet.address)
        return self

    def units(self, amount: str, token: str) -> int:
        return money.to_base_units(amount, TOKENS[token][1])

    async def pay(self, amount: str, *, to: str | None = None, token: str = "usdt", times: int = 1,
                  sender: LocalAccount | None = None, nonce: int | None = None) -> str:
        """A signed transfer of `amount` (`times` Transfer logs of it in one transferMany) to `to`, the wallet by
        default; a sender without the token makes it revert on chain."""
        contract, units = self.node.tokens[token], self.units(amount, token)
        recipient = to or self.wallet.address
        call = (contract.functions.transfer(recipient, units) if times == 1
                else contract.functions.transferMany([recipient] * times, [units] * times))
        return await self.chain.send_raw(await self.chain.sign(sender or self.buyer, call, nonce))

    async def tick(self) -> Tick:
        return await self.watcher.run_once()

    async def checkout(self, amount: str = "10.00", **extra) -> dict:
        status, created = await self.client.post(QUICK, {"amount": amount, **extra})
        assert status == 201, created
        return created

    async def report(self, session_key: str, tx_hash: str) -> None:
        url = f"{self.stack.base_url}/c/{session_key}/payment-attempts"
        async with self.stack.http.post(url, json={"network": SLUG, "tx_hash": tx_hash}) as response:
            assert response.status == 201, await response.text()

    async def order(self, order_id: str) -> dict:
        return await order(self.client, order_id)

    async def attempts(self, session_id: str) -> tuple[tuple[str, str | None], ...]:
        rows = await self.stack.pool.fetch(
            "SELECT status, reason FROM payment_attempts WHERE session_id = $1 ORDER BY created_at", session_id)
        return tuple(sorted((r["status"], r["reason"]) for r in rows))

    async def attempt(self, tx_hash: str) -> dict:
        row = await self.stack.pool.fetchrow(
            "SELECT status, confirmations, reason, seen_block FROM payment_attempts WHERE network = $1 AND tx_hash = $2",
            SLUG, tx_hash)
        return dict(row)
