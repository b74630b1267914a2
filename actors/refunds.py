"""Refund transitions of docs/spec.md §3.1 inside the order aggregate, where the money invariant lives:
every refund not REJECTED counts against what was paid, so the sum never exceeds it."""

from __future__ import annotations

from msgspec.structs import replace

from actors import messages as m
from actors.errors import Refused, conflict, not_found
from actors.rules import CARD
from actors.state import Order, OrderStatus, Refund, RefundStatus, TxAttempt
from common import money


def _ensure_refundable(order: Order, amount: int, network: str) -> None:
    if order.amount_paid == 0:
        raise conflict("order_not_paid", "This order has received no payment, so nothing can be refunded.", "order_id")
    if amount > order.refundable:
        raise conflict(
            "amount_exceeds_refundable",
            f"amount {money.format(amount)} is above the refundable balance {money.format(order.refundable)}.",
            "amount",
        )
    if network == CARD and amount > order.refundable_by_card:
        raise conflict(
            "amount_exceeds_card_paid",
            f"amount {money.format(amount)} is above what card refunds may return on this order "
            f"({money.format(order.refundable_by_card)}): a card refund never exceeds what was paid by card.",
            "amount",
        )


def create(order: Order, cmd: m.CreateRefund) -> list[m.Event]:
    if order.refund(cmd.refund_id) is not None:
        raise conflict("refund_exists", "A refund with this id already exists.", "refund_id")
    _ensure_refundable(order, cmd.amount, cmd.destination.refund_network)
    requested = m.RefundRequested(
        at=cmd.at, refund_id=cmd.refund_id, link_token=cmd.link_token, amount=cmd.amount, reason=cmd.reason,
        destination=cmd.destination, flow=cmd.flow, note=cmd.note, token=cmd.token,
    )
    events: list[m.Event] = [requested]
    if cmd.flow == "merchant" or cmd.auto_approve:
        events.append(m.RefundApproved(at=cmd.at, refund_id=cmd.refund_id, amount=cmd.amount))
    return events


def _refund(order: Order, refund_id: str) -> Refund:
    refund = order.refund(refund_id)
    if refund is None:
        raise not_found("refund")
    return refund


def _require(refund: Refund, status: RefundStatus, action: str) -> None:
    if refund.status is not status:
        raise conflict(
            "refund_state_conflict",
            f"Only a {status.value} refund can be {action}; this one is {refund.status.value}.",
            "refund_id",
        )


def approve(order: Order, cmd: m.ApproveRefund) -> list[m.Event]:
    refund = _refund(order, cmd.refund_id)
    _require(refund, RefundStatus.PENDING, "approved")
    return [m.RefundApproved(at=cmd.at, refund_id=refund.refund_id, amount=refund.amount)]


def reject(order: Order, cmd: m.RejectRefund) -> list[m.Event]:
    refund = _refund(order, cmd.refund_id)
    _require(refund, RefundStatus.PENDING, "rejected")
    return [m.RefundRejected(at=cmd.at, refund_id=refund.refund_id, amount=refund.amount, reason=cmd.reason)]


def cancel(order: Order, cmd: m.CancelRefund) -> list[m.Event]:
    refund = _refund(order, cmd.refund_id)
    _require(refund, RefundStatus.APPROVED, "canceled")
    if refund.refund_network == CARD:
        # The service sends an approved card refund to the provider at once: a cancel would race the money.
        raise conflict("refund_sent_to_provider",
                       "An approved card refund is sent to the card provider at once and can no longer be canceled.",
                       "refund_id")
    return [m.RefundCanceled(at=cmd.at, refund_id=refund.refund_id, amount=refund.amount)]


def submit_tx(order: Order, cmd: m.SubmitRefundTx) -> list[m.Event]:
    refund = _refund(order, cmd.refund_id)
    if cmd.network != refund.refund_network:
        raise Refused(422, "network_mismatch", f"This refund is paid on {refund.refund_network}; a transaction on "
                                               f"{cmd.network} cannot pay it.", "network")
    attempt = refund.attempt(cmd.network, cmd.tx_hash)
    if attempt is not None and attempt.status == "failed":
        raise Refused(422, "tx_hash_already_refused",
                      f"This transaction was already checked for this refund and refused: {attempt.reason}", "tx_hash")
    if attempt is not None:
        return []  # posted again while verification runs
    _require(refund, RefundStatus.APPROVED, "paid out")
    if cmd.claimed_by and cmd.claimed_by != refund.refund_id:
        raise conflict("tx_hash_already_used",
                       "This transaction was already submitted for another refund; one transfer pays one refund.",
                       "tx_hash")
    return [m.RefundTxSubmitted(at=cmd.at, refund_id=refund.refund_id, network=cmd.network, tx_hash=cmd.tx_hash,
                                token_address=cmd.token_address)]


def fail_tx(order: Order, cmd: m.FailRefundTx) -> list[m.Event]:
    refund = _refund(order, cmd.refund_id)
    attempt = refund.attempt(cmd.network, cmd.tx_hash)
    if attempt is None or attempt.status != "verifying":
        return []  # a late or repeated verdict
    return [m.RefundTxFailed(at=cmd.at, refund_id=refund.refund_id, network=cmd.network, tx_hash=cmd.tx_hash,
                             reason=cmd.reason)]


def execute(order: Order, cmd: m.ConfirmRefundTransfer) -> list[m.Event]:
    refund = _refund(order, cmd.refund_id)
    if refund.status is RefundStatus.EXECUTED and refund.executed_tx_hash == cmd.tx_hash:
        return []  # the watcher reported the same transfer again
    _require(refund, RefundStatus.APPROVED, "executed")
    return [m.RefundExecuted(at=cmd.at, refund_id=refund.refund_id, amount=refund.amount, network=cmd.network,
                             tx_hash=cmd.tx_hash, token_address=cmd.token_address)]


def _card_refund(order: Order, refund_id: str) -> Refund:
    refund = _refund(order, refund_id)
    if refund.refund_network != CARD:
        raise Refused(422, "not_a_card_refund", "This refund is paid on chain, not through the card provider.",
                      "refund_id")
    return refund


def record_card(order: Order, cmd: m.RecordCardRefund) -> list[m.Event]:
    """The provider's word on a card refund: one attempt per provider refund, settled once; repeats are no-ops."""
    refund = _card_refund(order, cmd.refund_id)
    # A refusal before the provider made a refund of its own still needs a name of its own in the history.
    tx_hash = cmd.provider_refund_id or f"refused:{refund.refund_id}:{cmd.attempt}"
    attempt = refund.attempt(CARD, tx_hash)
    events: list[m.Event] = []
    if attempt is None:
        if refund.card_attempt_due != cmd.attempt:
            return []  # a late report of an attempt already settled (a webhook after the service's own call)
        events.append(m.RefundTxSubmitted(at=cmd.at, refund_id=refund.refund_id, network=CARD, tx_hash=tx_hash,
                                          token_address=""))
    elif attempt.status != "verifying":
        return []
    if cmd.status == "succeeded":
        events.append(m.RefundExecuted(at=cmd.at, refund_id=refund.refund_id, amount=refund.amount, network=CARD,
                                       tx_hash=tx_hash, token_address=""))
    elif cmd.status in ("failed", "canceled"):
        events.append(m.RefundTxFailed(at=cmd.at, refund_id=refund.refund_id, network=CARD, tx_hash=tx_hash,
                                       reason=cmd.reason or f"the card provider reports the refund {cmd.status}"))
    return events


def retry(order: Order, cmd: m.RetryRefund) -> list[m.Event]:
    refund = _card_refund(order, cmd.refund_id)
    _require(refund, RefundStatus.APPROVED, "retried")
    refused = sum(1 for a in refund.attempts if a.status == "failed") > refund.retries
    if not refused or any(a.status == "verifying" for a in refund.attempts):
        raise conflict("refund_not_refused", "Only a card refund whose last attempt the provider refused can be "
                                             "retried.", "refund_id")
    return [m.RefundRetried(at=cmd.at, refund_id=refund.refund_id, amount=refund.amount)]


# An executed refund moves a paid order; other statuses (a canceled order that had received money) stay.
REFUND_MOVES = {OrderStatus.PAID, OrderStatus.PARTIAL_PAID, OrderStatus.PARTIALLY_REFUNDED}


def evolve(order: Order, event: m.Event) -> Order:
    match event:
        case m.RefundRequested():
            d = event.destination
            refund = Refund(
                refund_id=event.refund_id, link_token=event.link_token, amount=event.amount, reason=event.reason,
                refund_to_address=d.refund_to_address, refund_network=d.refund_network,
                refund_token_address=d.refund_token_address, flow=event.flow, note=event.note,
                token=event.token, created_at=event.at, updated_at=event.at,
            )
            return replace(order, refunds=order.refunds + (refund,))
        case m.RefundApproved():
            return _set(order, event.refund_id, event, status=RefundStatus.APPROVED)
        case m.RefundRejected():
            return _set(order, event.refund_id, event, status=RefundStatus.REJECTED, rejection_reason=event.reason)
        case m.RefundCanceled():
            return _set(order, event.refund_id, event, status=RefundStatus.REJECTED, rejection_reason="canceled")
        case m.RefundTxSubmitted():
            attempt = TxAttempt(network=event.network, tx_hash=event.tx_hash, token_address=event.token_address,
                                submitted_at=event.at)
            return _set(order, event.refund_id, event, attempts=order.refund(event.refund_id).attempts + (attempt,))
        case m.RefundTxFailed():
            return _set_attempt(order, event, status="failed", reason=event.reason)
        case m.RefundExecuted():
            order = _set_attempt(order, event, status="executed")
            order = _set(order, event.refund_id, event, status=RefundStatus.EXECUTED, executed_tx_hash=event.tx_hash,
                         executed_network=event.network, executed_token_address=event.token_address)
            refunded = order.amount_refunded + event.amount
            status = order.status
            if status in REFUND_MOVES:
                status = OrderStatus.REFUNDED if refunded >= order.amount_paid else OrderStatus.PARTIALLY_REFUNDED
            return replace(order, amount_refunded=refunded, status=status)
        case m.RefundRetried():
            return _set(order, event.refund_id, event, retries=order.refund(event.refund_id).retries + 1)
    raise TypeError(f"unhandled event {type(event).__name__}")


def _set_attempt(order: Order, event, **changes) -> Order:
    refund = order.refund(event.refund_id)
    attempts = tuple(replace(a, **changes) if (a.network, a.tx_hash) == (event.network, event.tx_hash) else a
                     for a in refund.attempts)
    return _set(order, event.refund_id, event, attempts=attempts)


def _set(order: Order, refund_id: str, event: m.Event, **changes) -> Order:
    refunds = tuple(
        replace(r, updated_at=event.at, **changes) if r.refund_id == refund_id else r for r in order.refunds
    )
    return replace(order, refunds=refunds)


EVENTS = (m.RefundRequested, m.RefundApproved, m.RefundRejected, m.RefundCanceled, m.RefundTxSubmitted,
          m.RefundTxFailed, m.RefundExecuted, m.RefundRetried)
