"""chain_watchers.verify: one row per rule, for refunds and payments; observations are built by hand."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from chain_watchers.base import TokenTransfer, TxObservation
from chain_watchers.registry import Stablecoin
from chain_watchers.verify import (
    PaymentExpectation,
    Progress,
    RefundExpectation,
    Verdict,
    due_height,
    to_micros,
    verify_payment,
    verify_refund,
)

USDT = Stablecoin(address="0xdAC17F958D2ee523a2206206994597C13D831ec7", symbol="USDT", decimals=6)
USDC = Stablecoin(address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", symbol="USDC", decimals=6)
BSC_USDT = Stablecoin(address="0x55d398326f99059fF775485246999027B3197955", symbol="USDT", decimals=18)
BUYER, MERCHANT, STRANGER = "0x" + "B" * 40, "0x" + "A" * 40, "0x" + "C" * 40
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def moved(to: str, units: int, coin: Stablecoin = USDT, ordinal: int = 0) -> TokenTransfer:
    return TokenTransfer(token_address=coin.address, from_address=MERCHANT if to == BUYER else BUYER, to_address=to,
                         amount_base_units=units, ordinal=ordinal)


def seen(*transfers: TokenTransfer, found: bool = True, success: bool | None = True, depth: int = 3,
         final: bool = True, block: str | None = "100", reason: str | None = None) -> TxObservation:
    return TxObservation(network="ethereum", tx_hash="0x" + "1f" * 32, found=found, success=success,
                         confirmations=depth, final=final, transfers=transfers, block_ref=block, reason=reason)


MISSING = seen(found=False, success=None, depth=0, final=False, block=None, reason="no such transaction")
MEMPOOL = seen(success=None, depth=0, final=False, block=None, reason="pending: not yet in a block")
REVERTED = seen(success=False, reason="failed: reverted (receipt status 0)")


def minute(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def at(minutes: float = 1, seen_block: str | None = None, missing_since: float | None = None) -> Progress:
    """A check `minutes` after the hash was posted; `missing_since` is the minute an earlier check found it nowhere."""
    return Progress(submitted_at=T0, now=minute(minutes), seen_block=seen_block,
                    missing_since=None if missing_since is None else minute(missing_since))


REFUND = RefundExpectation(token=USDT, to_address=BUYER, min_base_units=3_000_000, required=3)

# (case, observation, progress, outcome, reason, confirmations, seen_block)
REFUND_ROWS = [
    ("confirmed-exact", seen(moved(BUYER, 3_000_000)), at(), "confirmed", None, 3, "100"),
    ("confirmed-more-than-owed", seen(moved(BUYER, 3_500_000)), at(), "confirmed", None, 3, "100"),
    ("confirmed-split-in-two-transfers", seen(moved(BUYER, 1_000_000), moved(BUYER, 2_000_000, ordinal=1)), at(),
     "confirmed", None, 3, "100"),
    ("pending-shallow", seen(moved(BUYER, 3_000_000), depth=1, final=False, reason="1 of 3 confirmations"), at(),
     "pending", "1 of 3 confirmations", 1, "100"),
    ("pending-deep-but-chain-not-final", seen(moved(BUYER, 3_000_000), depth=40, final=False), at(),
     "pending", "40 of 3 confirmations; the chain does not yet call it final", 40, "100"),
    ("pending-in-mempool", MEMPOOL, at(), "pending", "pending: not yet in a block", 0, None),
    ("pending-not-found-yet", MISSING, at(29), "pending",
     "not found yet: waiting for the transaction to reach a node", 0, None),
    ("failed-not-found-after-deadline", MISSING, at(30), "failed",
     "not found on ethereum 30 minutes after it was submitted", 0, None),
    ("failed-reverted", REVERTED, at(), "failed",
     "the transaction failed on chain (failed: reverted (receipt status 0))", 3, "100"),
    ("failed-no-transfer-of-that-token", seen(moved(BUYER, 3_000_000, USDC)), at(), "failed",
     f"moved no USDT ({USDT.address})", 3, "100"),
    ("failed-no-transfer-at-all", seen(), at(), "failed", f"moved no USDT ({USDT.address})", 3, "100"),
    ("failed-wrong-recipient", seen(moved(STRANGER, 3_000_000)), at(), "failed",
     f"sent USDT to {STRANGER}, not to the refund address {BUYER}", 3, "100"),
    ("failed-below-amount-owed", seen(moved(BUYER, 2_999_999)), at(), "failed",
     "moved 2.999999 USDT to the refund address, less than the 3 owed", 3, "100"),
    ("failed-mismatch-reported-before-depth", seen(moved(STRANGER, 3_000_000), depth=1, final=False), at(),
     "failed", f"sent USDT to {STRANGER}, not to the refund address {BUYER}", 1, "100"),
    ("confirmed-failed-tx-that-still-moved-tokens", seen(moved(BUYER, 3_000_000), success=False, reason="aborted"),
     at(), "confirmed", None, 3, "100"),
]


@pytest.mark.parametrize(("observation", "progress", "outcome", "reason", "depth", "block"),
                         [row[1:] for row in REFUND_ROWS], ids=[row[0] for row in REFUND_ROWS])
def test_refund_verdict(observation, progress, outcome, reason, depth, block) -> None:
    verdict = verify_refund(observation, REFUND, progress)
    assert (verdict.outcome, verdict.reason, verdict.confirmations, verdict.seen_block) == (
        outcome, reason, depth, block)


def test_confirmed_refund_names_the_token_and_amount() -> None:
    verdict = verify_refund(seen(moved(BUYER, 3_500_000)), REFUND, at())
    assert verdict == Verdict(outcome="confirmed", confirmations=3, seen_block="100", token_address=USDT.address,
                              amount_base_units=3_500_000, amount_micros=3_500_000)


def test_refund_in_an_18_decimal_token_compares_base_units() -> None:
    want = RefundExpectation(token=BSC_USDT, to_address=BUYER, min_base_units=3 * 10**18, required=15)
    short = verify_refund(seen(moved(BUYER, 3 * 10**18 - 1, BSC_USDT)), want, at())
    assert short.reason == "moved 2.999999999999999999 USDT to the refund address, less than the 3 owed"
    assert verify_refund(seen(moved(BUYER, 3 * 10**18, BSC_USDT)), want, at()).outcome == "confirmed"


def test_not_found_deadline_is_a_parameter() -> None:
    verdict = verify_refund(MISSING, REFUND, at(2), not_found_after=timedelta(minutes=2))
    assert (verdict.outcome, verdict.reason) == ("failed", "not found on ethereum 2 minutes after it was submitted")


PAYMENT = PaymentExpectation(tokens=(USDT, USDC), to_address=MERCHANT, required=3)

# (case, observation, outcome, reason, token, micros)
PAYMENT_ROWS = [
    ("confirmed-full", seen(moved(MERCHANT, 10_000_000)), "confirmed", None, USDT.address, 10_000_000),
    ("confirmed-underpayment-is-still-money", seen(moved(MERCHANT, 4_000_000)), "confirmed", None, USDT.address,
     4_000_000),
    ("confirmed-overpayment-counted-in-full", seen(moved(MERCHANT, 12_000_000)), "confirmed", None, USDT.address,
     12_000_000),
    ("confirmed-two-stablecoins-summed-largest-named",
     seen(moved(MERCHANT, 1_000_000), moved(MERCHANT, 2_000_000, USDC, 1)), "confirmed", None, USDC.address, 3_000_000),
    ("pending-shallow", seen(moved(MERCHANT, 10_000_000), depth=2, final=False), "pending", "2 of 3 confirmations",
     None, 0),
    ("failed-reverted", REVERTED, "failed", "the transaction failed on chain (failed: reverted (receipt status 0))",
     None, 0),
    ("failed-no-stablecoin", seen(moved(MERCHANT, 10_000_000, Stablecoin(address=STRANGER, symbol="X", decimals=6))),
     "failed", "moved no stablecoin accepted on ethereum", None, 0),
    ("failed-wrong-recipient", seen(moved(STRANGER, 10_000_000)), "failed",
     f"sent USDT to {STRANGER}, not to the merchant's receive address {MERCHANT}", None, 0),
    ("failed-dust-below-a-micro-dollar", seen(moved(MERCHANT, 0)), "failed",
     "moved less than 0.000001 USD to the merchant's receive address", None, 0),
]


@pytest.mark.parametrize(("observation", "outcome", "reason", "token", "micros"),
                         [row[1:] for row in PAYMENT_ROWS], ids=[row[0] for row in PAYMENT_ROWS])
def test_payment_verdict(observation, outcome, reason, token, micros) -> None:
    verdict = verify_payment(observation, PAYMENT, at())
    assert (verdict.outcome, verdict.reason, verdict.token_address, verdict.amount_micros) == (
        outcome, reason, token, micros)


WAITING = "removed by a chain reorganisation (was in block 98); waiting for it to be mined again"
DROPPED = ("dropped after being seen in block 98: a chain reorganisation removed it and no node has known it for {} "
           "minutes")


def remined(to: str, depth: int = 3, final: bool = True) -> TxObservation:
    """The transaction, with transfers to `to`, in block 101 after block 98 left the chain."""
    return seen(moved(to, 10_000_000), block="101", depth=depth, final=final)


# A transaction seen in block 98 whose block a reorganisation removed; the same rule for refunds and payments.
# (case, observation of the expected recipient, progress, outcome, reason, confirmations, seen_block, missing_since)
REORG_ROWS: list[tuple[str, Callable[[str], TxObservation], Progress, str, str | None, int, str, datetime | None]] = [
    ("pending-first-check-that-finds-it-nowhere", lambda _: MISSING, at(1, seen_block="98"), "pending", WAITING, 0,
     "98", minute(1)),
    ("pending-the-deadline-counts-from-going-missing-not-from-submission", lambda _: MISSING,
     at(30, seen_block="98", missing_since=1), "pending", WAITING, 0, "98", minute(1)),
    ("failed-not-found-deadline-after-going-missing", lambda _: MISSING, at(31, seen_block="98", missing_since=1),
     "failed", DROPPED.format(30), 0, "98", minute(1)),
    ("pending-back-in-the-mempool-is-no-longer-missing", lambda _: MEMPOOL, at(20, seen_block="98", missing_since=1),
     "pending", "back in the mempool after a reorganisation (was in block 98)", 0, "98", None),
    ("pending-remined-counts-confirmations-from-its-new-block",
     lambda to: remined(to, depth=1, final=False), at(40, seen_block="98", missing_since=1), "pending",
     "1 of 3 confirmations", 1, "101", None),
    ("confirmed-remined-in-another-block", remined, at(40, seen_block="98", missing_since=1), "confirmed", None, 3,
     "101", None),
]


RULES = [(verify_refund, REFUND, BUYER), (verify_payment, PAYMENT, MERCHANT)]  # (verify, expectation, recipient)


@pytest.mark.parametrize(("verify", "want", "to"), RULES, ids=["refund", "payment"])
@pytest.mark.parametrize(("observation", "progress", "outcome", "reason", "depth", "block", "missing_since"),
                         [row[1:] for row in REORG_ROWS], ids=[row[0] for row in REORG_ROWS])
def test_reorganised_away(verify, want, to, observation, progress, outcome, reason, depth, block,
                          missing_since) -> None:
    verdict = verify(observation(to), want, progress)
    assert (verdict.outcome, verdict.reason, verdict.confirmations, verdict.seen_block, verdict.missing_since) == (
        outcome, reason, depth, block, missing_since)


def test_reorganised_away_deadline_is_the_not_found_parameter() -> None:
    verdict = verify_payment(MISSING, PAYMENT, at(3, seen_block="98", missing_since=1),
                             not_found_after=timedelta(minutes=2))
    assert (verdict.outcome, verdict.reason) == ("failed", DROPPED.format(2))


@pytest.mark.parametrize(("units", "decimals", "micros"), [
    (12_500_000, 6, 12_500_000), (12_500_000 * 10**12, 18, 12_500_000), (10**12 - 1, 18, 0), (125, 2, 1_250_000),
    (0, 6, 0),
], ids=["six-decimals", "eighteen-decimals", "dust-rounds-down", "two-decimals", "zero"])
def test_to_micros(units: int, decimals: int, micros: int) -> None:
    assert to_micros(units, decimals) == micros


@pytest.mark.parametrize(("seen_block", "required", "due"), [
    ("100", 3, 102), ("100", 1, 100), (None, 3, None), ("0:8000000000000000:4242", 1, None),
], ids=["evm-block", "one-confirmation", "in-no-block", "ton-shard-block"])
def test_a_transaction_is_due_at_the_height_that_completes_its_depth(seen_block, required, due) -> None:
    assert due_height(seen_block, required) == due
