"""The TRON adapter on answers recorded from TRON mainnet and Nile (tests/chain/recorded/tron/README.md), served by the
local full node as java-tron renders them for tronpy (`visible: true`): one case a recorded file."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pytest

from chain_watchers.base import SeenTransfer, TokenTransfer

from .contract import adapter_behind
from .fake_tron_node import (
    HISTORY,
    SOLID_DEPTH,
    Chain,
    Recorded,
    build_app,
    recorded,
    transaction_in_history,
    visible_info,
)

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
LEDGER_ACCOUNT = "TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre"  # the account of Ledger Live's recorded history


def usdt(sender: str, recipient: str, units: int) -> TokenTransfer:
    return TokenTransfer(token_address=USDT, from_address=sender, to_address=recipient, amount_base_units=units,
                         ordinal=0)


@dataclass(frozen=True)
class Receipt:
    transaction: str | None  # the recorded transaction served beside it; None: its own, from the TronGrid history
    success: bool
    transfers: tuple[TokenTransfer, ...]
    reason: str | None = None


RECEIPTS = {
    "mainnet_info_usdt_transfer_b69c51db.json": Receipt(
        "mainnet_tx_usdt_transfer_f591b0c6.json", True,
        (usdt("TJoaVSdktrnndU4dmKm33SWMKoXt4LLFbU", "TUikLT3nTTjTkXPAuC4xUGj84vfSERCWRn", 3_500_000),)),
    # The receipt's revert text reaches the merchant as the reason, decoded (hex without visible, text with it).
    "mainnet_info_usdt_out_of_energy_e63a324a.json": Receipt(
        "mainnet_tx_ret_out_of_energy_e63a324a.json", False, (),
        "failed: OUT_OF_ENERGY (Not enough energy for 'SSTORE' operation executing: curInvokeEnergyLimit[78572], "
        "curOpEnergy[20000], penaltyEnergy[68000], usedEnergy[33567])"),
    # A TRX transfer has no receipt result: it succeeded by being in a block, and moved no token.
    "mainnet_info_trx_transfer_23897196.json": Receipt("mainnet_tx_trx_transfer_6adc5b54.json", True, ()),
    "mainnet_info_usdt_transfer_0130dfde.json": Receipt(
        None, True, (usdt(LEDGER_ACCOUNT, "TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx", 41_677_389),)),
    "mainnet_info_usdt_transfer_46710419.json": Receipt(
        None, True, (usdt(LEDGER_ACCOUNT, "TCB8H6cKtfLZJyt3tXkbN1a8Nxrh2x14RB", 1_000),)),
    "mainnet_info_usdt_transfer_f34b0925.json": Receipt(
        None, True, (usdt(LEDGER_ACCOUNT, "TCB8H6cKtfLZJyt3tXkbN1a8Nxrh2x14RB", 10_000),)),
}
TRANSACTIONS = [
    "mainnet_tx_visible_usdt_transfer_1d6a2876.json",
    "mainnet_tx_usdt_transfer_f591b0c6.json",
    "mainnet_tx_trx_transfer_6adc5b54.json",
    "nile_tx_contract_call_01b4cde4.json",
]
SIGNED = [name for name in TRANSACTIONS if "..." not in recorded(name)["raw_data_hex"]]  # the Nile one is shortened


def partner(receipt: Receipt, info: dict) -> dict:
    if receipt.transaction is None:
        return transaction_in_history(info["id"])
    body = recorded(receipt.transaction)
    return {**body, "txID": info["id"]} if "txID" in body else body


@pytest.mark.parametrize("name", RECEIPTS.keys())
async def test_the_adapter_extracts_the_payment_from_a_recorded_receipt(name: str) -> None:
    receipt, info = RECEIPTS[name], recorded(name)
    # java-tron names a log's contract in base58 when tronpy asks (visible=true): the form the adapter must read.
    assert all(log["address"].startswith("T") for log in visible_info(info).get("log", []))
    chain = Chain(head=info["blockNumber"] + SOLID_DEPTH + 5)
    chain.transactions[info["id"]] = Recorded(partner(receipt, info), info)
    async with adapter_behind(build_app(chain), "TRON_RPC_URL", "tron") as adapter:
        seen = await adapter.fetch(info["id"])
    assert (seen.found, seen.success, seen.final, seen.confirmations, seen.block_ref) == (
        True, receipt.success, True, SOLID_DEPTH + 6, str(info["blockNumber"]))
    assert (seen.transfers, seen.reason) == (receipt.transfers, receipt.reason)


@pytest.mark.parametrize("name", TRANSACTIONS)
async def test_a_recorded_transaction_without_its_receipt_is_pending(name: str) -> None:
    """Until its block, a node knows the transaction and answers {} for its receipt, whatever form the body takes."""
    tx_hash = recorded(name)["txID"]
    chain = Chain()
    chain.transactions[tx_hash] = Recorded(recorded(name), {})
    async with adapter_behind(build_app(chain), "TRON_RPC_URL", "tron") as adapter:
        seen = await adapter.fetch(tx_hash)
    assert (seen.found, seen.success, seen.confirmations, seen.transfers, seen.reason) == (
        True, None, 0, (), "pending: not yet in a block")


@pytest.mark.parametrize("name", SIGNED)
def test_a_recorded_transaction_is_the_signed_original(name: str) -> None:
    body = recorded(name)
    assert hashlib.sha256(bytes.fromhex(body["raw_data_hex"])).hexdigest() == body["txID"]


async def test_trongrid_history_and_the_adapter_agree_by_hash_and_by_block_scan() -> None:
    """TronGrid's own decoding of the account's transfers is the oracle for the three receipts recorded beside it."""
    entries = {e["transaction_id"]: e for e in recorded(HISTORY)["data"]}
    assert all(hashlib.sha256(bytes.fromhex(e["detail"]["raw_data_hex"])).hexdigest() == tx_hash
               for tx_hash, e in entries.items())
    infos = [recorded(name) for name in RECEIPTS if RECEIPTS[name].transaction is None]
    chain = Chain(head=max(info["blockNumber"] for info in infos) + SOLID_DEPTH)
    for info in infos:
        chain.transactions[info["id"]] = Recorded(entries[info["id"]]["detail"], info)
    async with adapter_behind(build_app(chain), "TRON_RPC_URL", "tron") as adapter:
        by_hash = {info["id"]: (await adapter.fetch(info["id"])).transfers for info in infos}
        by_block = [seen for info in infos for seen in await adapter.transfers_in_block(info["blockNumber"])]
    for tx_hash, transfers in by_hash.items():
        entry = entries[tx_hash]
        assert [(t.token_address, t.from_address, t.to_address, t.amount_base_units) for t in transfers] == [
            (entry["token_info"]["address"], entry["from"], entry["to"], int(entry["value"]))]
    assert by_block == [SeenTransfer(tx_hash=info["id"], position=info["blockNumber"], transfer=by_hash[info["id"]][0])
                        for info in infos]


async def test_a_recorded_block_of_trx_transfers_holds_no_token_transfer() -> None:
    infos = recorded("nile_infos_in_block_66987565.json")
    chain = Chain(head=66987565 + SOLID_DEPTH)
    for info in infos:
        chain.transactions[info["id"]] = Recorded({}, info)
    async with adapter_behind(build_app(chain), "TRON_NILE_RPC_URL", "tron-nile") as adapter:
        assert await adapter.transfers_in_block(66987565) == []
    assert [body for path, body in chain.requests] == [{"num": 66987565}]
