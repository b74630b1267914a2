"""The `data` of every webhook event and of the events API, one struct per event type.

Built from the order's state by the explicit mapping of actors/publication.py. Every payload names its order
(`order_id`, `order_number`, the order's status once the event's transition is applied) and never carries
`external_ref` (docs/spec.md §6); a refund's and a refund request's events each carry that object's current facts,
so each tells the whole story. Amounts are decimal strings in USD, times ISO 8601 in UTC.
"""

from __future__ import annotations

import msgspec

from contract.api import Amount, OrderStatus, RefundStatus, Timestamp, TokenStatus


class _Order(msgspec.Struct, kw_only=True):
    order_id: str
    order_number: str
    order_status: OrderStatus


class LineItem(msgspec.Struct, kw_only=True):
    name: str
    quantity: int
    unit_amount: Amount


class OrderCreated(_Order, kw_only=True):
    amount: Amount
    line_items: list[LineItem]
    metadata: dict[str, str]
    payment_link_id: str | None = None  # the payment link the buyer opened, for an order made by one


class SessionCreated(_Order, kw_only=True):
    amount_due: Amount
    session_id: str
    session_key: str
    expires_at: Timestamp
    success_url: str | None
    cancel_url: str | None


class SessionChanged(_Order, kw_only=True):
    """checkout_session.superseded, .expired and .completed."""

    session_id: str


class PaymentReceived(_Order, kw_only=True):
    payment_id: str
    network: str
    tx_hash: str
    token_address: str
    amount: Amount
    session_id: str | None
    late: bool


class OrderPartiallyPaid(_Order, kw_only=True):
    amount_paid: Amount
    amount_due: Amount


class OrderSettled(_Order, kw_only=True):
    """payment.settled and order.resolved."""

    amount_paid: Amount
    receipt_url: str | None = None  # the buyer's receipt on the checkout origin; null for orders made before it
    payment_link_id: str | None = None


class OrderCanceled(_Order, kw_only=True):
    reason: str
    note: str | None


class OrderReopened(_Order, kw_only=True):
    pass


class _Refund(_Order, kw_only=True):
    refund_id: str
    refund_status: RefundStatus
    amount: Amount
    reason: str | None
    refund_to_address: str
    refund_network: str
    refund_token_address: str
    link_token: str


class RefundRequested(_Refund, kw_only=True):
    source: str
    note: str | None
    token: str | None


class RefundChanged(_Refund, kw_only=True):
    """payment.refund.approved, .rejected and .canceled: `reason` is the rejection's where one was given."""


class RefundTransfer(_Refund, kw_only=True):
    """payment.refund.tx_submitted and .executed."""

    network: str
    tx_hash: str
    token_address: str
    receipt_url: str | None = None  # on .executed: the receipt, which now lists the refund


class RefundTransferFailed(_Refund, kw_only=True):
    """`reason` says why the transaction did not pay the refund; the refund stays APPROVED."""

    network: str
    tx_hash: str


class TokenSubmitted(_Refund, kw_only=True):
    token: str


class _Token(_Order, kw_only=True):
    token: str
    refund_request_status: TokenStatus
    amount: Amount
    expires_at: Timestamp
    ref_type: str
    ref_value: str


class TokenCreated(_Token, kw_only=True):
    source: str
    metadata: dict[str, str]
    hide_summary: bool
    hide_header: bool


class TokenExpired(_Token, kw_only=True):
    pass


class TokenCanceled(_Token, kw_only=True):
    reason: str | None


class RenewalRequested(_Token, kw_only=True):
    customer_note: str | None


class TokenRenewed(_Order, kw_only=True):
    """The old token's facts, and the token that replaced it."""

    old_token: str
    new_token: str
    refund_request_status: TokenStatus
    amount: Amount
    expires_at: Timestamp
    ref_type: str
    ref_value: str


# Each event type's data, for the documentation and the pinned samples (tests/contract).
BY_TYPE: dict[str, type] = {
    "order.created": OrderCreated,
    "checkout_session.created": SessionCreated,
    "checkout_session.superseded": SessionChanged,
    "checkout_session.expired": SessionChanged,
    "checkout_session.completed": SessionChanged,
    "payment.received": PaymentReceived,
    "order.partially_paid": OrderPartiallyPaid,
    "payment.settled": OrderSettled,
    "order.resolved": OrderSettled,
    "order.canceled": OrderCanceled,
    "order.reopened": OrderReopened,
    "payment.refund.requested": RefundRequested,
    "payment.refund.approved": RefundChanged,
    "payment.refund.rejected": RefundChanged,
    "payment.refund.canceled": RefundChanged,
    "payment.refund.tx_submitted": RefundTransfer,
    "payment.refund.tx_failed": RefundTransferFailed,
    "payment.refund.executed": RefundTransfer,
    "payment.refund.retried": RefundChanged,
    "refund_request.created": TokenCreated,
    "refund_request.submitted": TokenSubmitted,
    "refund_request.expired": TokenExpired,
    "refund_request.canceled": TokenCanceled,
    "refund_request.renewal_requested": RenewalRequested,
    "refund_request.renewed": TokenRenewed,
}
