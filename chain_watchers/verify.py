"""Verdicts on observed transactions: pure rules from an observation and an expectation to pending, confirmed, failed."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

import msgspec

from chain_watchers.base import TokenTransfer, TxObservation
from chain_watchers.registry import Stablecoin
from common.money import from_base_units

MICROS = 6  # the service counts USD in micro-dollars
# A hash nobody has seen this long after it was posted is taken as never broadcast (or dropped from every mempool).
NOT_FOUND_AFTER = timedelta(minutes=30)


class Progress(msgspec.Struct, frozen=True, kw_only=True):
    """What earlier checks learnt, and the time of this one (passed in: the rules never read a clock)."""

    submitted_at: datetime
    now: datetime
    seen_block: str | None = None  # the block an earlier check saw the transaction in
    missing_since: datetime | None = None  # the first check that found it nowhere after it was in a block


class RefundExpectation(msgspec.Struct, frozen=True, kw_only=True):
    """At least `min_base_units` of `token` (normal form) to `to_address` (normal form)."""

    token: Stablecoin
    to_address: str
    min_base_units: int
    required: int  # confirmations the network asks for


class PaymentExpectation(msgspec.Struct, frozen=True, kw_only=True):
    """Any accepted stablecoin (addresses in normal form) to the merchant's receive address (normal form)."""

    tokens: tuple[Stablecoin, ...]
    to_address: str
    required: int


def due_height(seen_block: str | None, required: int) -> int | None:
    """The head at which a transaction in `seen_block` reaches `required` confirmations: checking it before then can
    only answer "not yet". None where the block reference is no height (TON's shard block ids) or there is none."""
    if seen_block is None or not seen_block.isdecimal():
        return None
    return int(seen_block) + required - 1


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    outcome: Literal["pending", "confirmed", "failed"]
    confirmations: int
    seen_block: str | None  # where the transaction is now, else where it was last seen
    reason: str | None = None
    missing_since: datetime | None = None  # set while a transaction seen in a block is known nowhere
    token_address: str | None = None  # the stablecoin that arrived (the largest amount when several did)
    amount_base_units: int = 0  # of token_address, to the expected address
    amount_micros: int = 0  # everything that arrived, in micro-USD (payments)


def to_micros(units: int, decimals: int) -> int:
    """Base units to micro-USD (1 token = 1 USD), rounding dust below a micro-dollar down."""
    if decimals >= MICROS:
        return units // 10 ** (decimals - MICROS)
    return units * 10 ** (MICROS - decimals)


def _failed(seen: TxObservation, progress: Progress, reason: str, missing_since: datetime | None = None) -> Verdict:
    return Verdict(outcome="failed", confirmations=seen.confirmations, seen_block=seen.block_ref or progress.seen_block,
                   reason=reason, missing_since=missing_since)


def _pending(seen: TxObservation, progress: Progress, reason: str, missing_since: datetime | None = None) -> Verdict:
    return Verdict(outcome="pending", confirmations=seen.confirmations,
                   seen_block=seen.block_ref or progress.seen_block, reason=reason, missing_since=missing_since)


def _presence(seen: TxObservation, progress: Progress, not_found_after: timedelta) -> Verdict | None:
    """The verdict while the transaction is missing, unexecuted or failed; None once it executed successfully."""
    if not seen.found:
        if progress.seen_block is not None:
            return _reorganised_away(seen, progress, not_found_after)
        waited = progress.now - progress.submitted_at
        if waited >= not_found_after:
            minutes = int(waited.total_seconds() // 60)
            return _failed(seen, progress, f"not found on {seen.network} {minutes} minutes after it was submitted")
        return _pending(seen, progress, "not found yet: waiting for the transaction to reach a node")
    if seen.success is None:
        if progress.seen_block is not None and seen.block_ref is None:
            return _pending(seen, progress, f"back in the mempool after a reorganisation (was in block "
                                            f"{progress.seen_block})")
        return _pending(seen, progress, seen.reason or "waiting to be included in a block")
    if seen.success is False and not seen.transfers:
        return _failed(seen, progress, f"the transaction failed on chain ({seen.reason or 'no reason given'})")
    # A failed transaction that still reports transfers moved them (TON: a jetton wallet credits before it notifies
    # an undeployed owner, whose notification then aborts); the money counts like any other.
    return None


def _reorganised_away(seen: TxObservation, progress: Progress, not_found_after: timedelta) -> Verdict:
    """It was in a block and no node knows it now: that block left the chain.

    Nodes put a reorganised block's transactions back in their mempool, and the same transaction is often mined again;
    a node asked in between (another backend of a provider) may know it nowhere. Failing it now would lose a payment
    that lands later, so the deadline for a hash nobody knows runs again, from the first check that missed it.
    """
    since = progress.missing_since or progress.now
    gone = progress.now - since
    if gone >= not_found_after:
        minutes = int(gone.total_seconds() // 60)
        return _failed(seen, progress, f"dropped after being seen in block {progress.seen_block}: a chain "
                                       f"reorganisation removed it and no node has known it for {minutes} minutes",
                       since)
    return _pending(seen, progress, f"removed by a chain reorganisation (was in block {progress.seen_block}); "
                                    "waiting for it to be mined again", since)


def _depth(seen: TxObservation, progress: Progress, required: int) -> Verdict | None:
    """Pending until the chain calls it final at the required depth."""
    if seen.final:
        return None
    reason = f"{seen.confirmations} of {required} confirmations"
    if seen.confirmations >= required:
        reason += "; the chain does not yet call it final"
    return _pending(seen, progress, seen.reason or reason)


def _elsewhere(transfers: list[TokenTransfer], what: str, expected: str, whose: str) -> str:
    others = ", ".join(sorted({t.to_address for t in transfers}))
    return f"sent {what} to {others}, not to {whose} {expected}"


def verify_refund(seen: TxObservation, want: RefundExpectation, progress: Progress,
                  not_found_after: timedelta = NOT_FOUND_AFTER) -> Verdict:
    """docs/spec.md §4.1: the transaction succeeded and moved at least the refund amount of that token to
    refund_to_address."""
    early = _presence(seen, progress, not_found_after)
    if early is not None:
        return early
    coin = want.token
    # Mismatches are facts of the executed transaction, so they are reported without waiting for depth.
    of_token = [t for t in seen.transfers if t.token_address == coin.address]
    if not of_token:
        return _failed(seen, progress, f"moved no {coin.symbol} ({coin.address})")
    to_refund = [t for t in of_token if t.to_address == want.to_address]
    if not to_refund:
        return _failed(seen, progress, _elsewhere(of_token, coin.symbol, want.to_address, "the refund address"))
    moved = sum(t.amount_base_units for t in to_refund)
    if moved < want.min_base_units:
        return _failed(seen, progress, f"moved {from_base_units(moved, coin.decimals)} {coin.symbol} to the refund "
                                       f"address, less than the {from_base_units(want.min_base_units, coin.decimals)} "
                                       "owed")
    waiting = _depth(seen, progress, want.required)
    if waiting is not None:
        return waiting
    return Verdict(outcome="confirmed", confirmations=seen.confirmations, seen_block=seen.block_ref,
                   token_address=coin.address, amount_base_units=moved, amount_micros=to_micros(moved, coin.decimals))


def verify_payment(seen: TxObservation, want: PaymentExpectation, progress: Progress,
                   not_found_after: timedelta = NOT_FOUND_AFTER) -> Verdict:
    """A payment is whatever accepted stablecoins reached the receive address: less than owed is still money."""
    early = _presence(seen, progress, not_found_after)
    if early is not None:
        return early
    coins = {coin.address: coin for coin in want.tokens}
    stable = [t for t in seen.transfers if t.token_address in coins]
    if not stable:
        return _failed(seen, progress, f"moved no stablecoin accepted on {seen.network}")
    to_merchant = [t for t in stable if t.to_address == want.to_address]
    if not to_merchant:
        symbols = "/".join(sorted({coins[t.token_address].symbol for t in stable}))
        return _failed(seen, progress, _elsewhere(stable, symbols, want.to_address, "the merchant's receive address"))
    per_token: dict[str, int] = {}
    for t in to_merchant:
        per_token[t.token_address] = per_token.get(t.token_address, 0) + t.amount_base_units
    micros = {token: to_micros(units, coins[token].decimals) for token, units in per_token.items()}
    if sum(micros.values()) == 0:
        return _failed(seen, progress, "moved less than 0.000001 USD to the merchant's receive address")
    waiting = _depth(seen, progress, want.required)
    if waiting is not None:
        return waiting
    token = max(micros, key=lambda address: micros[address])
    return Verdict(outcome="confirmed", confirmations=seen.confirmations, seen_block=seen.block_ref,
                   token_address=token, amount_base_units=per_token[token], amount_micros=sum(micros.values()))
