"""Solana adapter: solana-py's AsyncClient, built by open_adapter, against the local JSON-RPC server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from solders.keypair import Keypair
from solders.signature import Signature

from chain_watchers.base import InvalidAddress, TokenTransfer, UnknownToken
from chain_watchers.solana import SolanaAdapter

from .contract import AdapterContract, Sent, adapter_behind
from .fake_solana_rpc import FINALIZED_DEPTH, Cluster, build_app

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
RECEIVER_INDEX = 2  # the recipient's token account sits third in the recorded account keys


def wallet() -> str:
    return str(Keypair().pubkey())


class SolanaWorld:
    def __init__(self, cluster: Cluster, adapter: SolanaAdapter) -> None:
        self.cluster, self.adapter = cluster, adapter
        self.sender, self.recipient, self.stranger = wallet(), wallet(), wallet()

    def send(self, depth: int, amount: int, to: str | None = None, **options) -> Sent:
        to = to or self.recipient
        slot = self.cluster.head - depth + 1
        signature = self.cluster.add_transfer(
            slot=slot, mint=USDC, sender=self.sender, recipient=to, amount=amount, **options
        )
        moved = TokenTransfer(
            token_address=USDC, from_address=self.sender, to_address=to, amount_base_units=amount,
            ordinal=RECEIVER_INDEX,
        )
        failed = options.get("failed", False) or options.get("processed_only", False)
        return Sent(signature, () if failed else (moved,), depth=depth)

    async def finalized_transfer(self) -> Sent:
        return self.send(FINALIZED_DEPTH + 8, 123_456_789)

    async def failed_transfer(self) -> Sent:
        return self.send(FINALIZED_DEPTH + 8, 5_000_000, failed=True)

    async def shallow_transfer(self) -> Sent:
        return self.send(5, 42_000_000)

    async def transfer_to_someone_else(self) -> Sent:
        sent = self.send(FINALIZED_DEPTH + 1, 10_000_000, to=self.stranger)
        return Sent(sent.tx_hash, sent.expected, intended_recipient=self.recipient)

    def unknown(self) -> Sent:
        return Sent(str(Signature.new_unique()), ())

    async def advance(self, blocks: int) -> None:
        self.cluster.head += blocks

    def respell(self, tx_hash: str) -> None:
        return None


@pytest.fixture
async def solana() -> AsyncIterator[SolanaWorld]:
    cluster = Cluster()
    async with adapter_behind(build_app(cluster), "SOLANA_RPC_URL", "solana") as adapter:
        assert isinstance(adapter, SolanaAdapter)
        yield SolanaWorld(cluster, adapter)


class TestSolanaContract(AdapterContract):
    @pytest.fixture
    def world(self, solana: SolanaWorld) -> SolanaWorld:
        return solana


async def test_processed_signature_is_found_but_not_executed(solana: SolanaWorld) -> None:
    sent = solana.send(1, 1_000_000, processed_only=True)
    seen = await solana.adapter.fetch(sent.tx_hash)
    assert (seen.found, seen.success, seen.confirmations, seen.final, seen.transfers) == (True, None, 0, False, ())


async def test_depth_alone_is_not_finality_while_roots_stall(solana: SolanaWorld) -> None:
    solana.cluster.frozen_root = solana.cluster.head - 100
    sent = await solana.finalized_transfer()
    seen = await solana.adapter.fetch(sent.tx_hash)
    assert seen.confirmations >= solana.adapter.network.confirmations
    assert (seen.success, seen.final) == (True, False)
    assert seen.reason == "40 of 32 confirmations; the chain does not yet call it final"


async def test_adapter_reads_jsonparsed_at_confirmed_commitment(solana: SolanaWorld) -> None:
    sent = await solana.shallow_transfer()  # a finalized-commitment read would not see this one
    seen = await solana.adapter.fetch(sent.tx_hash)
    assert seen.found and seen.transfers
    assert solana.cluster.calls == ["getSignatureStatuses", "getTransaction", "getSlot"]


async def test_balances_without_owner_fall_back_to_the_token_account(solana: SolanaWorld) -> None:
    sent = await solana.finalized_transfer()
    record = solana.cluster.transactions[sent.tx_hash].result
    for balance in record["meta"]["preTokenBalances"] + record["meta"]["postTokenBalances"]:
        del balance["owner"]  # how transactions recorded before 2022 look
    token_account = record["transaction"]["message"]["accountKeys"][RECEIVER_INDEX]["pubkey"]
    seen = await solana.adapter.fetch(sent.tx_hash)
    assert [(t.to_address, t.amount_base_units) for t in seen.transfers] == [(token_account, 123_456_789)]


async def test_reference_key_finds_the_payment(solana: SolanaWorld) -> None:
    reference = wallet()
    sent = solana.send(3, 9_990_000, reference=reference)
    await solana.finalized_transfer()  # another payment, without the reference
    assert await solana.adapter.find_by_reference(reference) == (sent.tx_hash,)


def test_payment_link_is_a_solana_pay_transfer_request(solana: SolanaWorld) -> None:
    reference = wallet()
    link = solana.adapter.payment_link(solana.recipient, USDC, 12_500_000, reference=reference)
    assert link == f"solana:{solana.recipient}?amount=12.5&spl-token={USDC}&reference={reference}"


def test_payment_link_checks_token_and_reference(solana: SolanaWorld) -> None:
    with pytest.raises(UnknownToken):
        solana.adapter.payment_link(solana.recipient, wallet(), 1)
    with pytest.raises(InvalidAddress):
        solana.adapter.payment_link(solana.recipient, USDC, 1, reference="order-42")
