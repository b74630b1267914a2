"""Solana edge cases, one table: transactions the real SPL Token, Token-2022 and ATA programs executed on litesvm,
served by the local JSON-RPC cluster, found by the watcher through their Solana Pay reference or posted as refund
hashes, and applied by the order actor. Each row asserts what the merchant sees through the API."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from solders.keypair import Keypair

from chain_watchers import references
from tests.chain.fake_solana_rpc import FINALIZED_DEPTH
from tests.chain.solana_svm import USDC, USDC_DEVNET, Mint, Transfer, run, serve
from tests.integration.helpers import expire_due, order, quick
from tests.watchers import api
from tests.watchers.edge_cases import (
    assert_row,
    one_transfer_for_two_refunds,
    paid,
    refund_outcome,
)

NETWORK = "solana-devnet"
MERCHANT, BUYER, STRANGER = (str(Keypair().pubkey()) for _ in range(3))
LOOKALIKE = Mint("lookalike", str(Keypair().pubkey()))  # a mint with USDC's decimals and no other claim to the name
FEE_MINT = Mint("usdc", USDC_DEVNET, "token2022", feeBps=100)  # a Token-2022 USDC withholding 1 % per transfer


@dataclass(frozen=True)
class Pay:
    amount: int  # base units (USDC has 6 decimals)
    to: str = MERCHANT  # the receiving wallet; None: a CPI moves the tokens, to a wallet the helper makes
    mint: str = "usdc"
    times: int = 1
    fail: bool = False
    later: bool = False  # reaches the node only after a first tick, although its slot is older


@dataclass(frozen=True)
class Case:
    kind: str  # "payment": found by its reference; "refund": posted with submit-tx for a 10.00 refund
    pays: tuple[Pay, ...]
    status: str  # the order's status (payment) or the refund's (refund)
    payments: tuple[str, ...] = ()  # amounts the order records (payment)
    verdicts: tuple[tuple[str, str | None], ...] = ()  # (status, reason) of each attempt or refund transaction
    mints: tuple[Mint, ...] = (USDC, LOOKALIKE)
    expired: bool = False


FAILED = 'the transaction failed on chain (failed: {"InstructionError": [1, {"Custom": 1}]})'
NO_STABLECOIN = f"moved no stablecoin accepted on {NETWORK}"
CASES = {
    "exact payment": Case("payment", (Pay(10_000_000),), **paid("PAID", "10.00")),
    "two transferChecked of 5.00 in one transaction are one payment of 10.00":
        Case("payment", (Pay(5_000_000, times=2),), **paid("PAID", "10.00")),
    "two payments to one session in one slot":
        Case("payment", (Pay(5_000_000), Pay(5_000_000)), **paid("PAID", "5.00", "5.00")),
    "out of order: the older transaction reaches the node after the newer":
        Case("payment", (Pay(6_000_000), Pay(4_000_000, later=True)), **paid("PAID", "6.00", "4.00")),
    "overpayment is recorded in full": Case("payment", (Pay(12_000_000),), **paid("PAID", "12.00")),
    "underpayment leaves the rest due": Case("payment", (Pay(7_000_000),), **paid("PARTIAL_PAID", "7.00")),
    "payment after the session expired is recorded on the canceled order (late)":
        Case("payment", (Pay(10_000_000),), **paid("CANCELED", "10.00"), expired=True),
    "a lookalike mint pays nothing": Case("payment", (Pay(10_000_000, mint="lookalike"),), "PENDING", (),
                                          (("rejected", NO_STABLECOIN),)),
    "Token-2022 with a transfer fee credits what arrived":
        Case("payment", (Pay(10_000_000),), **paid("PARTIAL_PAID", "9.90"), mints=(FEE_MINT,)),
    "a transfer made by a CPI (inner instruction) pays":
        Case("payment", (Pay(10_000_000, to=None),), **paid("PAID", "10.00")),
    "a transaction the token program refused pays nothing":
        Case("payment", (Pay(10_000_000, fail=True),), "PENDING", (),
             (("rejected", FAILED),)),
    "refund transfer executes the refund": Case("refund", (Pay(10_000_000, to=BUYER),), "EXECUTED", (),
                                                (("executed", None),)),
    "refund paid in full to the wrong address": Case("refund", (Pay(10_000_000, to=STRANGER),), "APPROVED", (),
        (("failed", f"sent USDC to {STRANGER}, not to the refund address {BUYER}"),)),
    "refund transfer the token program refused": Case("refund", (Pay(10_000_000, to=BUYER, fail=True),), "APPROVED",
        (), (("failed", FAILED),)),
    "refund through a transfer fee arrives short": Case("refund", (Pay(10_000_000, to=BUYER),), "APPROVED", (),
        (("failed", "moved 9.9 USDC to the refund address, less than the 10 owed"),), mints=(FEE_MINT,)),
}


def transfers(case: Case, reference: str | None) -> list[Transfer]:
    return [Transfer(f"pay{i}", p.amount, p.to, mint=p.mint, reference=reference, via="cpi" if p.to is None else "direct",
                     fail=p.fail, times=p.times) for i, p in enumerate(case.pays)]


async def pay(stack, merchant, solana, case: Case) -> tuple[str, tuple]:
    cluster, network, watcher = solana
    created = await quick(merchant, amount="10.00", ttl_seconds=60)
    if case.expired:
        await expire_due(stack, 120)
        assert (await order(merchant, created["order_id"]))["sessions"][0]["status"] == "EXPIRED"
    executed = run(transfers(case, references.reference(network, created["session_id"])), case.mints)
    await api.receive_on(merchant, NETWORK, executed["pay0"]["to"])
    slot = cluster.head - FINALIZED_DEPTH
    for i, p in enumerate(case.pays):
        if not p.later:
            serve(cluster, executed[f"pay{i}"], slot)
    await watcher.run_once()
    for i, p in enumerate(case.pays):
        if p.later:
            serve(cluster, executed[f"pay{i}"], slot - 1)
            await watcher.run_once()
    body = await order(merchant, created["order_id"])
    attempts = await stack.pool.fetch(
        "SELECT status, reason FROM payment_attempts WHERE session_id = $1 ORDER BY created_at, tx_hash",
        created["session_id"])
    verdicts = tuple(sorted((a["status"], a["reason"]) for a in attempts))
    return body["status"], (tuple(p["amount"] for p in body["payments"]), verdicts)


async def refund(stack, merchant, solana, case: Case) -> tuple[str, tuple]:
    cluster, _network, watcher = solana
    order_id = await api.paid_order(merchant)
    refund_id = await api.refund(merchant, order_id, "10.00", NETWORK, BUYER, USDC_DEVNET)
    executed = run(transfers(case, None), case.mints)
    signature = serve(cluster, executed["pay0"], cluster.head - FINALIZED_DEPTH)
    await api.submit(merchant, refund_id, signature, NETWORK, USDC_DEVNET)
    await watcher.run_once()
    return await refund_outcome(merchant, refund_id)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_edge_case(stack, merchant, solana, case: Case) -> None:
    assert_row(await {"payment": pay, "refund": refund}[case.kind](stack, merchant, solana, case), case)


async def test_one_refund_transfer_posted_for_a_second_refund_is_refused(merchant, solana) -> None:
    cluster, _network, watcher = solana
    first, second = [await api.refund(merchant, await api.paid_order(merchant), "10.00", NETWORK, BUYER, USDC_DEVNET)
                     for _ in range(2)]
    signature = serve(cluster, run([Transfer("refund", 10_000_000, BUYER)])["refund"], cluster.head - FINALIZED_DEPTH)
    await one_transfer_for_two_refunds(merchant, watcher, [first, second], signature, NETWORK, USDC_DEVNET)
