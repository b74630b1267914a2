"""Refund-request token transitions of docs/spec.md §3.2: one submission, expiry, cancel, renewal."""

from __future__ import annotations

from msgspec.structs import replace

from actors import messages as m
from actors import refunds
from actors.errors import Refused, conflict, not_found
from actors.state import Order, RefundToken, TokenStatus
from common import money


def _token(order: Order, token: str) -> RefundToken:
    found = order.token(token)
    if found is None:
        raise not_found("refund_request")
    return found


def mint(order: Order, cmd: m.MintRefundToken) -> list[m.Event]:
    if order.token(cmd.token) is not None:
        raise conflict("refund_request_exists", "A refund request with this token already exists.", "token")
    ceiling = order.refundable if cmd.amount is None else cmd.amount
    if order.amount_paid == 0:
        raise conflict("order_not_paid", "This order has received no payment, so nothing can be refunded.", "ref_value")
    if ceiling == 0 or ceiling > order.refundable:
        raise conflict(
            "amount_exceeds_refundable",
            f"amount {money.format(ceiling)} is above the refundable balance {money.format(order.refundable)}.",
            "amount",
        )
    return [m.TokenMinted(
        at=cmd.at, token=cmd.token, ref_type=cmd.ref_type, ref_value=cmd.ref_value, amount=ceiling,
        expires_at=cmd.expires_at, source=cmd.source, metadata=cmd.metadata, hide_summary=cmd.hide_summary,
        hide_header=cmd.hide_header,
    )]


def submit(order: Order, cmd: m.CreateRefund) -> list[m.Event]:
    """A buyer's form: the token must be ACTIVE and unexpired, the amount within its ceiling."""
    token = _token(order, cmd.token)
    status = token.status_at(cmd.at)
    if status is not TokenStatus.ACTIVE:
        raise conflict("refund_request_not_active", f"This refund request is {status.value}; it cannot be submitted.",
                       "token")
    if cmd.amount > token.amount:
        raise Refused(422, "amount_exceeds_ceiling",
                      f"amount may be at most {money.format(token.amount)} for this refund request.", "amount")
    return refunds.create(order, cmd) + [m.TokenSubmitted(at=cmd.at, token=token.token, refund_id=cmd.refund_id)]


def expire(order: Order, cmd: m.ExpireRefundToken) -> list[m.Event]:
    token = _token(order, cmd.token)
    if token.status is TokenStatus.ACTIVE and cmd.at >= token.expires_at:
        return [m.TokenExpired(at=cmd.at, token=token.token)]
    return []  # already moved on, or not yet due: the sweep may run early or twice


def cancel(order: Order, cmd: m.CancelRefundToken) -> list[m.Event]:
    token = _token(order, cmd.token)
    if token.status is TokenStatus.CANCELED:
        return []  # only the first cancel emits
    if token.status_at(cmd.at) is not TokenStatus.ACTIVE:
        raise conflict("refund_request_not_active",
                       f"Only an ACTIVE refund request can be canceled; this one is {token.status_at(cmd.at).value}.",
                       "token")
    return [m.TokenCanceled(at=cmd.at, token=token.token, reason=cmd.reason)]


def request_renewal(order: Order, cmd: m.RequestTokenRenewal) -> list[m.Event]:
    token = _token(order, cmd.token)
    status = token.status_at(cmd.at)
    if status is TokenStatus.RENEWAL_REQUESTED:
        return []  # the buyer pressed the button twice
    if status is not TokenStatus.EXPIRED_UNUSED:
        raise conflict("refund_request_not_expired", f"Only an expired refund request can be renewed; this one is "
                       f"{status.value}.", "token")
    expired = [m.TokenExpired(at=cmd.at, token=token.token)] if token.status is TokenStatus.ACTIVE else []
    return expired + [m.RenewalRequested(at=cmd.at, token=token.token, customer_note=cmd.customer_note)]


def approve_renewal(order: Order, cmd: m.ApproveTokenRenewal) -> list[m.Event]:
    token = _token(order, cmd.token)
    if token.status is not TokenStatus.RENEWAL_REQUESTED:
        raise conflict("renewal_not_requested",
                       f"No renewal was requested for this refund request; it is {token.status_at(cmd.at).value}.",
                       "token")
    return [
        m.TokenRenewed(at=cmd.at, old_token=token.token, new_token=cmd.new_token),
        m.TokenMinted(
            at=cmd.at, token=cmd.new_token, ref_type=token.ref_type, ref_value=token.ref_value, amount=token.amount,
            expires_at=cmd.expires_at, source="renewal", metadata=token.metadata, hide_summary=token.hide_summary,
            hide_header=token.hide_header,
        ),
    ]


def evolve(order: Order, event: m.Event) -> Order:
    match event:
        case m.TokenMinted():
            token = RefundToken(
                token=event.token, ref_type=event.ref_type, ref_value=event.ref_value, amount=event.amount,
                expires_at=event.expires_at, created_at=event.at, source=event.source, metadata=dict(event.metadata),
                hide_summary=event.hide_summary, hide_header=event.hide_header,
            )
            return replace(order, tokens=order.tokens + (token,))
        case m.TokenSubmitted():
            return _set(order, event.token, status=TokenStatus.SUBMITTED, refund_id=event.refund_id)
        case m.TokenExpired():
            return _set(order, event.token, status=TokenStatus.EXPIRED_UNUSED)
        case m.TokenCanceled():
            return _set(order, event.token, status=TokenStatus.CANCELED, cancel_reason=event.reason)
        case m.RenewalRequested():
            return _set(order, event.token, status=TokenStatus.RENEWAL_REQUESTED, customer_note=event.customer_note)
        case m.TokenRenewed():
            return _set(order, event.old_token, status=TokenStatus.RENEWED, replaced_by=event.new_token)
    raise TypeError(f"unhandled event {type(event).__name__}")


def _set(order: Order, token: str, **changes) -> Order:
    return replace(order, tokens=tuple(replace(t, **changes) if t.token == token else t for t in order.tokens))


EVENTS = (m.TokenMinted, m.TokenSubmitted, m.TokenExpired, m.TokenCanceled, m.RenewalRequested, m.TokenRenewed)
