"""TRON adapter: tronpy's AsyncTron, built by open_adapter, against the local full-node HTTP API."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
from tronpy.keys import PrivateKey

from chain_watchers.base import BlockNotAvailable, TokenTransfer
from chain_watchers.tron import TronAdapter

from .contract import AdapterContract, Sent, adapter_behind
from .fake_tron_node import SOLID_DEPTH, Chain, build_app

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


def wallet() -> str:
    return PrivateKey.random().public_key.to_base58check_address()


class TronWorld:
    def __init__(self, chain: Chain, adapter: TronAdapter) -> None:
        self.chain, self.adapter = chain, adapter
        self.sender, self.recipient, self.stranger = wallet(), wallet(), wallet()

    def send(self, depth: int | None, amount: int, to: str | None = None, outcome: str = "SUCCESS") -> Sent:
        to = to or self.recipient
        txid = self.chain.add_trc20_call(
            contract=USDT, owner=self.sender, to=to, amount=amount, depth=depth, outcome=outcome
        )
        moved = TokenTransfer(
            token_address=USDT, from_address=self.sender, to_address=to, amount_base_units=amount, ordinal=0
        )
        return Sent(txid, (moved,) if outcome == "SUCCESS" and depth is not None else (), depth=depth)

    async def finalized_transfer(self) -> Sent:
        return self.send(SOLID_DEPTH + 3, 123_456_789)

    async def failed_transfer(self) -> Sent:
        return self.send(SOLID_DEPTH + 3, 5_000_000, outcome="REVERT")

    async def shallow_transfer(self) -> Sent:
        return self.send(4, 42_000_000)

    async def transfer_to_someone_else(self) -> Sent:
        sent = self.send(SOLID_DEPTH, 10_000_000, to=self.stranger)
        return Sent(sent.tx_hash, sent.expected, intended_recipient=self.recipient)

    def unknown(self) -> Sent:
        return Sent(secrets.token_hex(32), ())

    async def advance(self, blocks: int) -> None:
        self.chain.head += blocks

    def respell(self, tx_hash: str) -> str:
        return tx_hash.upper()


@pytest.fixture
async def tron() -> AsyncIterator[TronWorld]:
    chain = Chain()
    async with adapter_behind(build_app(chain), "TRON_RPC_URL", "tron") as adapter:
        assert isinstance(adapter, TronAdapter)
        yield TronWorld(chain, adapter)


class TestTronContract(AdapterContract):
    @pytest.fixture
    def world(self, tron: TronWorld) -> TronWorld:
        return tron


async def test_transaction_without_receipt_is_found_but_not_executed(tron: TronWorld) -> None:
    sent = tron.send(None, 1_000_000)
    seen = await tron.adapter.fetch(sent.tx_hash)
    assert (seen.found, seen.success, seen.confirmations, seen.final, seen.transfers) == (True, None, 0, False, ())


async def test_depth_alone_is_not_finality_while_solidity_stalls(tron: TronWorld) -> None:
    tron.chain.frozen_solid = tron.chain.head - 100
    sent = await tron.finalized_transfer()
    seen = await tron.adapter.fetch(sent.tx_hash)
    assert seen.confirmations >= tron.adapter.network.confirmations
    assert (seen.success, seen.final) == (True, False)


async def test_revert_message_is_decoded_into_the_reason(tron: TronWorld) -> None:
    sent = await tron.failed_transfer()
    seen = await tron.adapter.fetch(sent.tx_hash)
    assert seen.reason == "failed: REVERT (REVERT opcode executed)"


async def test_approval_event_is_not_a_transfer(tron: TronWorld) -> None:
    txid = tron.chain.add_trc20_call(
        contract=USDT, owner=tron.sender, to=tron.recipient, amount=1_000, depth=30, approval=True
    )
    seen = await tron.adapter.fetch(txid)
    assert (seen.success, seen.transfers) == (True, ())


async def test_adapter_speaks_the_full_node_api_with_bare_hex_ids(tron: TronWorld) -> None:
    sent = await tron.finalized_transfer()
    await tron.adapter.fetch(sent.tx_hash.upper())
    paths = [path for path, _ in tron.chain.requests]
    assert paths[:2] == ["/wallet/gettransactionbyid", "/wallet/gettransactioninfobyid"]
    assert set(paths[2:]) == {"/wallet/getnodeinfo"}
    assert tron.chain.requests[0][1] == {"value": sent.tx_hash, "visible": True}


async def test_a_receipt_rendered_for_tronpy_names_its_token_in_base58_and_still_pays(tron: TronWorld) -> None:
    """tronpy asks for receipts with visible=true; java-tron then prints Log.address in base58, not as TVM hex."""
    sent = await tron.finalized_transfer()
    seen = await tron.adapter.fetch(sent.tx_hash)
    path, asked = tron.chain.requests[1]
    assert (path, asked["visible"]) == ("/wallet/gettransactioninfobyid", True)
    assert seen.transfers == sent.expected


async def test_a_block_scan_tells_an_empty_block_from_one_the_node_has_not_got(tron: TronWorld) -> None:
    """java-tron answers both with no receipts; only the block itself says whether there was nothing to read."""
    sent = tron.send(SOLID_DEPTH + 3, 7_000_000)
    block = tron.chain.head - SOLID_DEPTH - 2
    assert await tron.adapter.transfers_in_block(block + 1) == []
    tron.chain.lagging.add(block)
    with pytest.raises(BlockNotAvailable):
        await tron.adapter.transfers_in_block(block)
    tron.chain.lagging.clear()
    assert [seen.tx_hash for seen in await tron.adapter.transfers_in_block(block)] == [sent.tx_hash]


def test_tron_has_no_payment_link(tron: TronWorld) -> None:
    assert tron.adapter.payment_link(tron.recipient, USDT, 1_000_000, reference="order-42") is None
