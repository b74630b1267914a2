"""A merchant taking TestUSD on the local EVM chain through the public API, its buyer's wallet, and the EVM watcher.

The watcher runs in this process on an EvmAdapter over web3's AsyncEthereumTesterProvider: eth-tester's JSON-RPC
shapes are produced by web3 middleware on the client side, so serving it over HTTP would mean writing a second,
untested node. Everything past the adapter (store, verdicts, commands, actors) is the production path.
"""

from __future__ import annotations

import secrets

from chain_watchers.evm import EvmAdapter
from chain_watchers.runner import Tick, Watcher
from common import money
from testkit.signed import Signed
from tests.chain.test_evm import GAS, EvmWorld
from tests.integration.helpers import QUICK, order
from tests.watchers import api
from web.reads import networks


class EvmShop:
    def __init__(self, stack, client: Signed, chain: EvmWorld, make_watcher) -> None:
        self.stack, self.client, self.chain = stack, client, chain
        self.network = chain.adapter.network
        self.watcher: Watcher = self.new_watcher(make_watcher)

    def new_watcher(self, make_watcher) -> Watcher:
        async def open_adapter(network):
            return EvmAdapter(network, self.chain.w3)

        return make_watcher("evm", (self.network,), open_adapter)

    async def start(self) -> EvmShop:
        # Fresh keys per test: every new chain replays the same history, so fixed accounts would sign the very same
        # transactions (same hashes) in every test, and one database holds them all.
        self.buyer, self.wallet, self.stranger = [await self._account() for _ in range(3)]
        await self.chain.token.functions.mint(self.buyer, 10**12).transact({"from": self.chain.sender})
        await api.receive_on(self.client, "local", self.wallet)
        return self

    # the buyer, the merchant's wallet and the chain

    async def _account(self) -> str:
        address = self.chain.tester.add_account("0x" + secrets.token_hex(32))
        await self.chain.w3.eth.send_transaction({"from": self.chain.sender, "to": address, "value": 10**18})
        return address

    async def send(self, sender: str, to: str, amount: str) -> str:
        units = money.parse(amount)  # TestUSD has 6 decimals: base units are micro-dollars
        tx = await self.chain.token.functions.transfer(to, units).transact({"from": sender, "gas": GAS})
        return tx.to_0x_hex()

    async def mine(self, blocks: int) -> None:
        await self.chain.advance(blocks)

    async def tick(self) -> Tick:
        return await self.watcher.run_once()

    # the merchant's API and the hosted page

    async def checkout(self, amount: str) -> dict:
        status, created = await self.client.post(QUICK, {"amount": amount})
        assert status == 201, created
        return created

    async def residual_session(self, order_id: str) -> dict:
        status, created = await self.client.post("/b2b/v1/checkout-sessions", {"order_id": order_id})
        assert status == 201, created
        return created

    async def report(self, session_key: str, tx_hash: str) -> tuple[int, dict]:
        url = f"{self.stack.base_url}/c/{session_key}/payment-attempts"
        async with self.stack.http.post(url, json={"network": "local", "tx_hash": tx_hash}) as response:
            return response.status, await response.json()

    async def page_status(self, session_key: str) -> dict:
        async with self.stack.http.get(f"{self.stack.base_url}/c/{session_key}/status") as response:
            return await response.json()

    async def order(self, order_id: str) -> dict:
        return await order(self.client, order_id)

    async def events(self, order_id: str) -> list[str]:
        return await api.events(self.stack.pool, order_id)

    async def attempt(self, tx_hash: str) -> dict:
        row = await self.stack.pool.fetchrow(
            "SELECT status, confirmations, reason, seen_block FROM payment_attempts WHERE network = 'local'"
            " AND tx_hash = $1", tx_hash)
        return dict(row) if row else {}

    async def refund(self, order_id: str, amount: str) -> str:
        return await api.refund(self.client, order_id, amount, "local", self.buyer, self.chain.token.address)

    async def submit(self, refund_id: str, tx_hash: str) -> dict:
        return await api.submit(self.client, refund_id, tx_hash, "local", self.chain.token.address)

    async def read_refund(self, refund_id: str) -> dict:
        return await api.read_refund(self.client, refund_id)

    async def paid(self, amount: str) -> dict:
        """An order paid in full through the page's payment attempt and the watcher."""
        created = await self.checkout(amount)
        tx_hash = await self.send(self.buyer, self.wallet, amount)
        assert (await self.report(created["session_key"], tx_hash))[0] == 201
        await self.mine(self.network.confirmations)
        await self.tick()
        assert (await self.order(created["order_id"]))["status"] == "PAID"
        return created


def use_local_token(monkeypatch, token_address: str) -> None:
    """The web layer's registry, as the operator sets it after deploying testkit/contracts/TestUSD.sol."""
    monkeypatch.setenv("LOCAL_TESTUSD_ADDRESS", token_address)
    networks.registry.cache_clear()
