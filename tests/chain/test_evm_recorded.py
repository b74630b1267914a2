"""The EVM adapter on JSON-RPC answers recorded from public networks (tests/chain/recorded/evm/README.md).

The shipped registry networks are opened through open_adapter as in production; only their RPC URL points at the
local server, which answers with the recorded bodies.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from chain_watchers.base import TokenTransfer
from chain_watchers.clients import open_adapter
from chain_watchers.evm import EvmAdapter
from chain_watchers.registry import Stablecoin
from chain_watchers.verify import PaymentExpectation, Progress, verify_payment

from .contract import adapter_behind
from .fake_evm_rpc import RECORDED, Node, build_app, recorded

ETHEREUM_USDT = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
POLYGON_USDT = "0xc2132D05D31c914a87C6611C10748AEb04B58e8F"
BSC_BUSD = "0xe9e7CEA3DedcA5984780Bafc599bD69ADd087D56"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def tx_hash(name: str) -> str:
    return recorded(name)["result"]["transactionHash"]


async def fetch_receipt(name: str, url_variable: str, slug: str, depth: int | None = None) -> tuple:
    """(observation, network) for a recorded receipt; the head sits `depth` blocks on (the network's own depth when
    None), or is Ethereum's recorded eth_blockNumber when depth is 0."""
    node = Node()
    node.serve("eth_getTransactionReceipt", name)
    if depth == 0:
        node.serve("eth_blockNumber", "ethereum_block_number.json")
    async with adapter_behind(build_app(node), url_variable, slug) as adapter:
        if depth != 0:
            node.head = int(recorded(name)["result"]["blockNumber"], 16) + (depth or adapter.network.confirmations) - 1
        return await adapter.fetch(tx_hash(name)), adapter.network


def paid_to(seen, network, address: str):
    want = PaymentExpectation(tokens=network.stablecoins, to_address=address, required=network.confirmations)
    return verify_payment(seen, want, Progress(submitted_at=NOW, now=NOW))


async def test_usdt_paid_by_a_uniswap_swap_on_ethereum_mainnet() -> None:
    """The swap's output leg pays USDT to the wallet; the head is a recorded eth_blockNumber of the same provider."""
    seen, network = await fetch_receipt("ethereum_usdt_swap_receipt.json", "ETHEREUM_RPC_URL", "ethereum", depth=0)
    assert (seen.found, seen.success, seen.final, seen.block_ref) == (True, True, True, "17291184")
    assert seen.confirmations == 0x109238E - 0x107D7B0 + 1
    pool, wallet = "0xa82F91562E1CEf9dEc93a4ad328d01EA7827910a", "0x901c7C311d39e0b26257219765E71E8DB3107A81"
    assert seen.transfers == (
        TokenTransfer(token_address=ETHEREUM_USDT, from_address=pool, to_address=wallet,
                      amount_base_units=4_361_142_255, ordinal=590),
        # The token sold, 50,000 of an 18-decimal token: an Approval log (same topic count) sits between the two.
        TokenTransfer(token_address="0xb7135877cd5D40AA3b086ac6f21c51bbAfbBB41F", from_address=wallet,
                      to_address=pool, amount_base_units=50_000 * 10**18, ordinal=592),
    )
    verdict = paid_to(seen, network, wallet)
    assert (verdict.outcome, verdict.token_address, verdict.amount_micros) == ("confirmed", ETHEREUM_USDT, 4_361_142_255)


async def test_usdt_on_polygon_pays_the_pair_it_was_sent_to() -> None:
    shallow, _ = await fetch_receipt("polygon_usdt_swap_receipt.json", "POLYGON_RPC_URL", "polygon", depth=127)
    deep, network = await fetch_receipt("polygon_usdt_swap_receipt.json", "POLYGON_RPC_URL", "polygon")
    assert (shallow.final, shallow.confirmations, shallow.reason) == (False, 127, "127 of 128 confirmations")
    assert (deep.final, deep.confirmations, deep.reason) == (True, 128, None)
    sender, pair = "0x9D945d909Ca91937d19563e30bB4DAc12C860189", "0xc2755915a85C6f6c1C0F3a86ac8C058F11Caa9C9"
    assert deep.transfers[0] == TokenTransfer(token_address=POLYGON_USDT, from_address=sender, to_address=pair,
                                              amount_base_units=1_225_000_000, ordinal=0)
    # Two other tokens also move (ordinals 2 and 5); the MATIC fee logs (four topics) are not ERC-20 transfers.
    assert [t.ordinal for t in deep.transfers] == [0, 2, 5]
    verdict = paid_to(deep, network, pair)
    assert (verdict.outcome, verdict.amount_micros) == ("confirmed", 1_225_000_000)
    wrong = paid_to(deep, network, sender)
    assert (wrong.outcome, wrong.reason) == (
        "failed", f"sent USDT to {pair}, not to the merchant's receive address {sender}")


async def test_an_arbitrum_swap_moves_no_accepted_stablecoin() -> None:
    """Every Transfer-shaped log is reported (eighteen of thirty-six logs); none is a configured stablecoin."""
    seen, network = await fetch_receipt("arbitrum_swap_receipt.json", "ARBITRUM_RPC_URL", "arbitrum")
    logs = recorded("arbitrum_swap_receipt.json")["result"]["logs"]
    assert (seen.success, seen.final, len(logs), len(seen.transfers)) == (True, True, 36, 18)
    assert seen.transfers[2] == TokenTransfer(
        token_address="0x912CE59144191C1204E64559FE8253a0e49E6548",  # ARB
        from_address="0xa6c5C7D189fA4eB5Af8ba34E63dCDD3a635D433f",
        to_address="0x09E18590E8f76b6Cf471b3cd75fE1A1a9D2B2c2b", amount_base_units=73_771_950_330_441_922, ordinal=28)
    verdict = paid_to(seen, network, "0xb8B2522480f850EB198adA5c3f31AC528538D2F5")
    assert (verdict.outcome, verdict.reason) == ("failed", "moved no stablecoin accepted on arbitrum")


@pytest.mark.parametrize(
    ("name", "url_variable", "slug", "success", "reason"),
    [
        # Status 0x0 with every gas unit spent; Rinkeby is retired, so the answer is served as Sepolia's.
        ("rinkeby_failed_receipt.json", "SEPOLIA_RPC_URL", "sepolia", False,
         "the transaction failed on chain (failed: reverted (receipt status 0))"),
        # A validator's deposit to BSC's system contract: logs, none of them an ERC-20 transfer.
        ("bsc_validator_deposit_receipt.json", "BSC_RPC_URL", "bsc", True, "moved no stablecoin accepted on bsc"),
    ],
)
async def test_a_recorded_transaction_that_moved_no_token_pays_nothing(
    name: str, url_variable: str, slug: str, success: bool, reason: str
) -> None:
    seen, network = await fetch_receipt(name, url_variable, slug)
    assert (seen.found, seen.success, seen.final, seen.transfers) == (True, success, True, ())
    verdict = paid_to(seen, network, recorded(name)["result"]["from"].lower())
    assert (verdict.outcome, verdict.reason) == ("failed", reason)


async def test_a_mined_transaction_whose_receipt_the_node_lacks_is_pending_in_its_block() -> None:
    """Load-balanced providers answer eth_getTransactionByHash from a backend that has the block and the receipt from
    one that does not yet: the transaction is in a block, neither in the mempool nor dropped by a reorganisation."""
    node = Node()
    body = node.serve("eth_getTransactionByHash", "ethereum_usdt_swap_transaction.json")
    async with adapter_behind(build_app(node), "ETHEREUM_RPC_URL", "ethereum") as adapter:
        seen = await adapter.fetch(body["result"]["hash"])
        network = adapter.network
    assert (seen.found, seen.success, seen.final, seen.transfers) == (True, None, False, ())
    assert (seen.block_ref, seen.reason) == ("17291184", "in block 17291184; the node has no receipt for it yet")
    assert [call["method"] for call in node.calls] == ["eth_getTransactionReceipt", "eth_getTransactionByHash"]
    # An earlier check saw it in that block: the page must not tell the buyer it went back to the mempool.
    earlier = Progress(submitted_at=NOW, now=NOW, seen_block="17291184")
    want = PaymentExpectation(tokens=network.stablecoins, to_address=body["result"]["from"], required=64)
    verdict = verify_payment(seen, want, earlier)
    assert (verdict.outcome, verdict.seen_block, verdict.reason) == (
        "pending", "17291184", "in block 17291184; the node has no receipt for it yet")


async def test_busd_transfer_logs_recorded_on_bsc_are_found_by_recipient() -> None:
    """An 18-decimal stablecoin read by eth_getLogs; BUSD stands in for the network's configured coins here."""
    node = Node(logs=recorded("bsc_busd_transfer_logs.json")["result"])
    async with adapter_behind(build_app(node), "BSC_RPC_URL", "bsc") as shipped:
        network = msgspec.structs.replace(
            shipped.network, stablecoins=(Stablecoin(address=BSC_BUSD, symbol="BUSD", decimals=18),))
        adapter = await open_adapter(network)
        assert isinstance(adapter, EvmAdapter)
        block = 0x1B13C84
        merchant = "0x0e9939A5aD925de47536D8298A095B095cc6055c"
        try:
            [seen] = await adapter.transfers_to([merchant.lower()], block, block)
            busiest = await adapter.transfers_to(["0x8e744ec2795c8b836689d1b4ebe1489204357dac"], block, block)
            before = await adapter.transfers_to([merchant], block - 10, block - 1)
        finally:
            await adapter.close()
    assert (seen.tx_hash, seen.position) == (
        "0x4bec8bc79494adc928795bf69f43fb0b5ed448d687607250f0ca9d2987d026dd", block)
    assert seen.transfer == TokenTransfer(token_address=BSC_BUSD, from_address="0xFE52532feE05fDD7b6b5b4d42B999a2CD246BEC7",
                                          to_address=merchant, amount_base_units=100 * 10**18, ordinal=0x8A)
    assert [s.transfer.ordinal for s in busiest] == [0x5, 0x9, 0x1F, 0x6D]
    assert before == []
    [query] = node.calls[0]["params"]
    assert query["address"] == [BSC_BUSD] and query["topics"][2] == ["0x" + "0" * 24 + merchant[2:].lower()]


def test_every_recorded_file_is_a_whole_json_rpc_answer() -> None:
    names = sorted(path.name for path in RECORDED.glob("*.json"))
    assert len(names) >= 5
    for name in names:
        body = recorded(name)
        assert body["jsonrpc"] == "2.0" and "result" in body and "id" in body, name
