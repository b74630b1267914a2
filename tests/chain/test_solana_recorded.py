"""The Solana adapter on getTransaction answers recorded from Solana mainnet (tests/chain/recorded/solana/README.md)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from solders.keypair import Keypair
from solders.transaction import VersionedTransaction
from solders.transaction_status import EncodedConfirmedTransactionWithStatusMeta

from chain_watchers.base import TokenTransfer, TxObservation
from chain_watchers.solana import _error_as_sent

from .contract import adapter_behind
from .fake_solana_rpc import FINALIZED_DEPTH, Cluster, Recorded, build_app

RECORDED = Path(__file__).parent / "recorded" / "solana"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"


def recorded(name: str) -> dict:
    body = json.loads((RECORDED / name).read_text())
    return body.get("result", body)  # a whole JSON-RPC answer, or its result member where only that was published


async def observe(result: dict) -> TxObservation:
    """The adapter's view of a recorded answer served at its own slot, now finalized."""
    signature = result["transaction"]["signatures"][0]
    cluster = Cluster(head=result["slot"] + FINALIZED_DEPTH)
    cluster.transactions[signature] = Recorded(result["slot"], result)
    async with adapter_behind(build_app(cluster), "SOLANA_RPC_URL", "solana") as adapter:
        seen = await adapter.fetch(signature)
    assert (seen.tx_hash, seen.block_ref) == (signature, str(result["slot"]))
    return seen


@pytest.mark.parametrize(
    ("name", "credited"),
    [
        # A wallet's first USDC: the ATA program creates its account in the same transaction, so it has no pre balance.
        ("mainnet_usdc_transfer_checked_with_memo.json",
         TokenTransfer(token_address=USDC, from_address="8fusVwhgo4oS1fGpZKeRaXrJXQk9auKnAgcj9A97wR3t",
                       to_address="3i476kTBBTy7pBGx4CXwJpJ6phuwLQgcwLTdHhU3c7ui", amount_base_units=1000, ordinal=2)),
        # The tokens move inside a program's CPI (an inner `transfer`, stack height 2), not in a top-level instruction.
        ("mainnet_inner_transfer_via_cpi.json",
         TokenTransfer(token_address="3hUb4Av47q5XemKTf2rtmdrEDMUe7pun6NL5Vi1XrHvk",
                       from_address="7Evf8ULccoU7Cu5CV8NrMX6r2EpzdE4aQDsVp6eP7rLd",
                       to_address="GyYS6txBMRtaMbxR5JGsWZfJgyJNCCN8wg4Yu76uzcVg", amount_base_units=3461738833969,
                       ordinal=1)),
        # A multisig authority signs; the owner named in the balances is what receives.
        ("mainnet_multisig_transfer_checked.json",
         TokenTransfer(token_address="Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr",
                       from_address="8D3Dfbs2e7WFBWKvrsEJzZVtTockJLUwBxERi4gorjnN",
                       to_address="89D7KBRL4xnfotkdVojgCmWNNp6wpqBqaufSHwUNuoMu", amount_base_units=10, ordinal=1)),
    ],
)
async def test_the_adapter_extracts_the_payment_from_a_recorded_answer(name: str, credited: TokenTransfer) -> None:
    seen = await observe(recorded(name))
    assert (seen.found, seen.success, seen.final) == (True, True, True)
    assert seen.transfers == (credited,)


async def test_a_v0_transaction_through_a_lookup_table_that_moves_no_token_reports_no_transfer() -> None:
    # The recipient comes from an address lookup table (source "lookupTable"); only lamports move, so no stablecoin.
    seen = await observe(recorded("mainnet_v0_lookup_table_sol_transfer.json"))
    assert (seen.found, seen.success, seen.final, seen.transfers) == (True, True, True, ())


async def test_a_recorded_signature_list_is_read_newest_first_failed_ones_included() -> None:
    # Failed transactions carrying the key are listed too: each becomes an attempt that verification then rejects.
    answer = recorded("mainnet_get_signatures_for_address.json")
    cluster = Cluster(recorded={"getSignaturesForAddress": answer})
    async with adapter_behind(build_app(cluster), "SOLANA_RPC_URL", "solana") as adapter:
        found = await adapter.find_by_reference(str(Keypair().pubkey()))
    assert found == tuple(entry["signature"] for entry in answer)
    assert cluster.calls == ["getSignaturesForAddress"]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("mainnet_failed_incorrect_program_id_base64.json", '{"InstructionError": [0, "IncorrectProgramId"]}'),
        ("mainnet_failed_custom_error_base64.json", '{"InstructionError": [2, {"Custom": 30}]}'),
    ],
)
def test_a_failed_transactions_error_is_given_as_the_node_sent_it(name: str, reason: str) -> None:
    # Recorded in the base64 encoding, which the adapter never asks for: its meta goes to the error rendering directly.
    result = recorded(name)
    signed = VersionedTransaction.from_bytes(base64.b64decode(result["transaction"][0]))
    assert signed.verify_with_results() == [True]  # the recording is the signed transaction, unaltered
    meta = EncodedConfirmedTransactionWithStatusMeta.from_json(json.dumps(result)).transaction.meta
    assert _error_as_sent(meta) == reason
