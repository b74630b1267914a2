"""Follow transactions whose hash is known (refund transfers, payment attempts) to a verdict; tell the order actor."""

from __future__ import annotations

from msgspec.structs import replace

from accounts import merchants
from actors import confirmations
from actors import messages as m
from chain_watchers import store
from chain_watchers.base import ChainAdapter, UnknownToken
from chain_watchers.registry import Network
from chain_watchers.verify import (
    PaymentExpectation,
    Progress,
    RefundExpectation,
    Verdict,
    verify_payment,
    verify_refund,
)
from chain_watchers.watch import Watch
from common import money
from common.money import to_base_units


async def refunds(watch: Watch, network: Network, head: int | None = None) -> int:
    """Check every refund transfer due on the network at `head` (the newest block announced, None when unknown);
    returns how many verdicts reached the actor."""
    due = await store.due_refund_txs(watch.pool, network.slug, watch.now - watch.recheck, head, watch.options.batch)
    if not due:
        return 0
    told = 0
    for tx in due:
        adapter = await watch.adapter(network)
        verdict = await _refund_verdict(watch, adapter, tx)
        await store.refund_progress(watch.pool, tx, verdict, network.confirmations, watch.now)
        told += await _report_refund(watch, tx, verdict)
    return told


async def _refund_verdict(watch: Watch, adapter: ChainAdapter, tx: store.RefundTx) -> Verdict:
    progress = Progress(submitted_at=tx.submitted_at, now=watch.now, seen_block=tx.seen_block,
                        missing_since=tx.missing_since)
    try:
        coin = adapter.stablecoin(adapter.network, tx.token_address)
    except UnknownToken:  # the operator removed the token from networks.toml after the hash was posted
        return Verdict(outcome="failed", confirmations=0, seen_block=tx.seen_block,
                       reason=f"{tx.token_address} is no longer a stablecoin configured on {tx.network}")
    seen = await adapter.fetch(tx.tx_hash, account=tx.to_address)
    want = RefundExpectation(
        token=replace(coin, address=adapter.validate_address(coin.address)),
        to_address=adapter.validate_address(tx.to_address),
        min_base_units=to_base_units(money.format(tx.amount), coin.decimals),
        required=adapter.network.confirmations,
    )
    return verify_refund(seen, want, progress, watch.not_found_after)


async def _report_refund(watch: Watch, tx: store.RefundTx, verdict: Verdict) -> int:
    common = {"order_id": tx.order_id, "merchant_id": tx.merchant_id, "livemode": tx.livemode, "at": watch.now,
              "refund_id": tx.refund_id, "network": tx.network, "tx_hash": tx.tx_hash}
    if verdict.outcome == "confirmed":
        command: m.Command = m.ConfirmRefundTransfer(token_address=verdict.token_address, **common)
        return int((await watch.tell(f"watch:refund-executed:{tx.network}:{tx.tx_hash}", command)).ok)
    if verdict.outcome == "failed":
        command = m.FailRefundTx(reason=verdict.reason, **common)
        return int((await watch.tell(f"watch:refund-failed:{tx.network}:{tx.tx_hash}", command)).ok)
    return 0


async def payments(watch: Watch, network: Network, head: int | None = None) -> int:
    """Check every payment attempt due on the network at `head` (as for refunds); returns how many payments
    reached the actor."""
    due = await store.due_attempts(watch.pool, network.slug, watch.now - watch.recheck, head, watch.options.batch)
    told = 0
    addresses: dict[str, str | None] = {}
    for attempt in due:
        if attempt.merchant_id not in addresses:
            settings = await merchants.settings(watch.pool, attempt.merchant_id)
            addresses[attempt.merchant_id] = settings.receive_addresses.get(network.slug)
        verdict = await _payment_verdict(watch, await watch.adapter(network), attempt, addresses[attempt.merchant_id])
        status = _attempt_status(verdict)
        if verdict.outcome == "confirmed":
            report = _payment(watch, attempt, verdict)
            reply = await watch.tell(report.command_id, report.command)
            if not reply.ok:  # a refusal is recorded under the command id, so sending it again changes nothing
                status, verdict = "rejected", replace(verdict, reason=f"refused by the order: {reply.error.message}")
            told += reply.ok
        await store.attempt_progress(watch.pool, attempt, status, verdict, network.confirmations, watch.now)
    return told


async def _payment_verdict(watch: Watch, adapter: ChainAdapter, attempt: store.Attempt,
                           address: str | None) -> Verdict:
    if address is None:
        return Verdict(outcome="failed", confirmations=0, seen_block=attempt.seen_block,
                       reason=f"the merchant has no receive address on {attempt.network}")
    seen = await adapter.fetch(attempt.tx_hash, account=address)
    coins = tuple(replace(c, address=adapter.validate_address(c.address)) for c in adapter.network.stablecoins)
    want = PaymentExpectation(tokens=coins, to_address=adapter.validate_address(address),
                              required=adapter.network.confirmations)
    progress = Progress(submitted_at=attempt.created_at, now=watch.now, seen_block=attempt.seen_block,
                        missing_since=attempt.missing_since)
    return verify_payment(seen, want, progress, watch.not_found_after)


def _attempt_status(verdict: Verdict) -> str:
    if verdict.outcome == "confirmed":
        return "verified"
    if verdict.outcome == "failed":
        return "rejected"
    return "confirming" if verdict.seen_block is not None else "reported"


def _payment(watch: Watch, attempt: store.Attempt, verdict: Verdict) -> m.Envelope:
    return confirmations.payment_confirmed(
        order_id=attempt.order_id, merchant_id=attempt.merchant_id, livemode=attempt.livemode, at=watch.now,
        network=attempt.network, tx_hash=attempt.tx_hash, token_address=verdict.token_address,
        amount=verdict.amount_micros, session_id=attempt.session_id,
    )

