"""EVM adapter against web3 AsyncWeb3 on an in-process py-evm chain running the compiled TestUSD ERC-20."""

from __future__ import annotations

import json
import pathlib

import pytest
from hexbytes import HexBytes
from web3 import AsyncWeb3
from web3.providers.eth_tester import AsyncEthereumTesterProvider

from chain_watchers.base import TokenTransfer, UnknownToken
from chain_watchers.evm import TRANSFER_TOPIC, EvmAdapter, _transfers
from chain_watchers.registry import load_registry

from .contract import AdapterContract, Sent

ARTIFACT = json.loads((pathlib.Path(__file__).parents[2] / "testkit" / "contracts" / "TestUSD.json").read_text())
GAS = 200_000  # set explicitly so web3 does not estimate gas, which would refuse a reverting call before sending it


class EvmWorld:
    """A fresh chain per test: TestUSD deployed, the sender funded, the `local` network loaded from the registry."""

    async def start(self) -> EvmWorld:
        self.w3 = AsyncWeb3(AsyncEthereumTesterProvider())
        self.tester = self.w3.provider.ethereum_tester
        self.sender, self.recipient, self.stranger, self.spender = (await self.w3.eth.accounts)[:4]
        factory = self.w3.eth.contract(abi=ARTIFACT["abi"], bytecode=ARTIFACT["bytecode"])
        deployed = await factory.constructor().transact({"from": self.sender})
        receipt = await self.w3.eth.wait_for_transaction_receipt(deployed)
        self.token = self.w3.eth.contract(address=receipt["contractAddress"], abi=ARTIFACT["abi"])
        await self.token.functions.mint(self.sender, 10**30).transact({"from": self.sender})
        # The registry path the operator uses: the deployed address arrives through the environment.
        registry = load_registry(env={"LOCAL_TESTUSD_ADDRESS": self.token.address})
        self.adapter = EvmAdapter(registry.network("local"), self.w3)
        return self

    async def send(self, to: str, amount: int, sender: str | None = None) -> str:
        tx = await self.token.functions.transfer(to, amount).transact({"from": sender or self.sender, "gas": GAS})
        return tx.to_0x_hex()

    def transfer(self, to: str, amount: int, ordinal: int = 0, sender: str | None = None) -> TokenTransfer:
        return TokenTransfer(
            token_address=self.token.address, from_address=sender or self.sender, to_address=to,
            amount_base_units=amount, ordinal=ordinal,
        )

    async def finalized_transfer(self) -> Sent:
        tx_hash = await self.send(self.recipient, 123_456_789)
        await self.advance(self.adapter.network.confirmations)
        depth = self.adapter.network.confirmations + 1
        return Sent(tx_hash, (self.transfer(self.recipient, 123_456_789),), depth=depth)

    async def failed_transfer(self) -> Sent:
        # The stranger holds no TestUSD, so the transfer reverts on-chain with status 0 and no logs.
        return Sent(await self.send(self.recipient, 5, sender=self.stranger), ())

    async def shallow_transfer(self) -> Sent:
        tx_hash = await self.send(self.recipient, 42_000_000)
        return Sent(tx_hash, (self.transfer(self.recipient, 42_000_000),), depth=1)  # auto-mined into its own block

    async def transfer_to_someone_else(self) -> Sent:
        tx_hash = await self.send(self.stranger, 10_000_000)
        return Sent(tx_hash, (self.transfer(self.stranger, 10_000_000),), intended_recipient=self.recipient)

    def unknown(self) -> Sent:
        return Sent("0x" + "ab" * 32, ())

    async def advance(self, blocks: int) -> None:
        self.tester.mine_blocks(blocks)

    def respell(self, tx_hash: str) -> str:
        return "0x" + tx_hash[2:].upper()


@pytest.fixture
async def evm() -> EvmWorld:
    return await EvmWorld().start()


class TestEvmContract(AdapterContract):
    @pytest.fixture
    def world(self, evm: EvmWorld) -> EvmWorld:
        return evm


async def test_local_network_matches_the_chain_id_eth_tester_reports(evm: EvmWorld) -> None:
    assert await evm.w3.eth.chain_id == evm.adapter.network.chain_id == 131277322940537


async def test_transaction_in_the_mempool_is_found_but_not_executed(evm: EvmWorld) -> None:
    evm.tester.disable_auto_mine_transactions()
    tx_hash = await evm.send(evm.recipient, 7)
    seen = await evm.adapter.fetch(tx_hash)
    assert (seen.found, seen.success, seen.confirmations, seen.final, seen.transfers) == (True, None, 0, False, ())
    evm.tester.mine_blocks(1)
    mined = await evm.adapter.fetch(tx_hash)
    assert (mined.success, mined.confirmations, mined.transfers) == (True, 1, (evm.transfer(evm.recipient, 7),))


async def test_amounts_beyond_64_bits_stay_exact(evm: EvmWorld) -> None:
    amount = 10**24 + 7  # a million tokens at 18 decimals, plus seven wei
    seen = await evm.adapter.fetch(await evm.send(evm.recipient, amount))
    assert seen.transfers == (evm.transfer(evm.recipient, amount),)


async def test_transfer_from_names_the_token_owner_not_the_caller(evm: EvmWorld) -> None:
    await evm.token.functions.approve(evm.spender, 1_000).transact({"from": evm.sender})
    transfer_from = evm.token.functions.transferFrom(evm.sender, evm.recipient, 600)
    tx = await transfer_from.transact({"from": evm.spender, "gas": GAS})
    seen = await evm.adapter.fetch(tx.to_0x_hex())
    assert seen.transfers == (evm.transfer(evm.recipient, 600),)


async def test_logs_other_than_transfer_are_not_transfers(evm: EvmWorld) -> None:
    tx = await evm.token.functions.approve(evm.spender, 1_000).transact({"from": evm.sender})
    seen = await evm.adapter.fetch(tx.to_0x_hex())
    assert (seen.success, seen.transfers) == (True, ())


@pytest.mark.parametrize(
    ("topics", "data"),
    [(3, 0), (0, 32), (1, 32), (1, 64), (0, 96)],
    ids=["erc721-all-indexed", "assembly-bare-topic", "assembly-one-argument", "one-indexed", "none-indexed"],
)
def test_transfer_topic_in_another_layout_is_not_an_erc20_transfer(topics: int, data: int) -> None:
    """`topics` counts the argument topics after the event's own; raw LOG opcodes can emit any of these."""
    word = bytes(12) + bytes.fromhex("7e5f4552091a69125d5dfcb7b8c2659029395bdf")
    log = {
        "address": "0xF2E246BB76DF876Cef8b38ae84130F4F55De395b", "logIndex": 0,
        "topics": [HexBytes(TRANSFER_TOPIC)] + [HexBytes(word)] * topics, "data": HexBytes(bytes(data)),
    }
    assert _transfers([log]) == []


def test_payment_link_is_eip681_erc20_transfer(evm: EvmWorld) -> None:
    link = evm.adapter.payment_link(evm.recipient.lower(), evm.token.address.lower(), 12_500_000, reference="ignored")
    expected = f"ethereum:{evm.token.address}@131277322940537/transfer?address={evm.recipient}&uint256=12500000"
    assert link == expected


def test_payment_link_refuses_a_token_that_is_not_a_configured_stablecoin(evm: EvmWorld) -> None:
    with pytest.raises(UnknownToken):
        evm.adapter.payment_link(evm.recipient, evm.stranger, 1)


def test_adapter_refuses_a_network_of_another_family(evm: EvmWorld) -> None:
    with pytest.raises(ValueError, match="is solana, not evm"):
        EvmAdapter(load_registry().network("solana"), evm.w3)
