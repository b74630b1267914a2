"""Commands an order actor accepts and the events it records, as tagged msgspec structs.

Wire names (the tags) never change once shipped; new fields only with defaults. Like the order's
state (actors/state.py), these frozen structs are left out of garbage collection (gc=False).
"""

from __future__ import annotations

from datetime import datetime
from typing import Union

import msgspec


class LineItem(msgspec.Struct, frozen=True, gc=False):
    name: str
    quantity: int
    unit_amount: int  # micro-USD


class NewSession(msgspec.Struct, frozen=True, gc=False):
    session_id: str
    session_key: str
    expires_at: datetime
    success_url: str | None = None
    cancel_url: str | None = None


# Commands: imperative names, tag = kind. Every command names its order, merchant and mode
# so the actor itself refuses a command aimed at another merchant's or mode's order.


class _Command(msgspec.Struct, frozen=True, gc=False, tag_field="kind", kw_only=True):
    order_id: str
    merchant_id: str
    livemode: bool
    at: datetime


class CreateOrder(_Command, tag="create_order", kw_only=True):
    # 0 until the actor worker hands out the merchant's next number, before the command is decided.
    order_number: int = 0
    amount: int
    line_items: tuple[LineItem, ...] = ()
    external_ref: str | None = None
    metadata: dict[str, str] = {}
    session: NewSession | None = None
    # Made by the web, which alone holds the key a receipt's address is derived with (web/api/receipts.py).
    receipt_url: str | None = None
    payment_link_id: str | None = None  # the payment link a buyer opened to make this order
    customer_email: str | None = None  # where the receipt is mailed; shown to the merchant and to no buyer


class OpenSession(_Command, tag="open_session"):
    session: NewSession
    amount_due: int | None = None


class CancelOrder(_Command, tag="cancel_order"):
    reason: str = "merchant_canceled"
    note: str | None = None  # the merchant's own words, kept as metadata.cancel_note


class ReopenOrder(_Command, tag="reopen_order"):
    session: NewSession


class ResolveOrder(_Command, tag="resolve_order"):
    """Accept an underpaid order as paid; a dashboard action, not offered by the REST API."""


class ExpireSession(_Command, tag="expire_session"):
    session_id: str


class ConfirmPayment(_Command, tag="confirm_payment"):
    """A transfer confirmed on-chain (or by the test-mode helper, which sends this very command)."""

    payment_id: str
    network: str
    tx_hash: str
    token_address: str
    amount: int
    session_id: str | None = None
    card_brand: str = ""  # a card payment's, as the provider reported them, for the buyer's receipt
    card_last4: str = ""


class Destination(msgspec.Struct, frozen=True, gc=False):
    """Where a refund is paid: validated against the network registry before it reaches the actor."""

    refund_to_address: str
    refund_network: str
    refund_token_address: str


class CreateRefund(_Command, tag="create_refund"):
    """Merchant flow (APPROVED at once) or customer flow (PENDING unless auto-approved)."""

    refund_id: str
    link_token: str
    amount: int
    reason: str
    destination: Destination
    flow: str  # "merchant" or "customer"
    auto_approve: bool = False
    note: str | None = None
    token: str | None = None  # a buyer's submission through a refund-request token


class ApproveRefund(_Command, tag="approve_refund"):
    refund_id: str


class RejectRefund(_Command, tag="reject_refund"):
    refund_id: str
    reason: str | None = None


class CancelRefund(_Command, tag="cancel_refund"):
    """APPROVED -> REJECTED before the transfer was executed."""

    refund_id: str


class SubmitRefundTx(_Command, tag="submit_refund_tx"):
    """The merchant broadcast the refund transfer; the watcher of that network now verifies it."""

    refund_id: str
    network: str
    tx_hash: str
    token_address: str
    # The refund already holding this transfer, if any: filled in by the actor from refund_transactions just
    # before deciding (one transfer pays one refund, across orders), never by the sender.
    claimed_by: str = ""


class FailRefundTx(_Command, tag="fail_refund_tx"):
    """The watcher found the transaction failed, mismatched, too small or dropped (reorg)."""

    refund_id: str
    network: str
    tx_hash: str
    reason: str


class ConfirmRefundTransfer(_Command, tag="confirm_refund_transfer"):
    """A refund transfer verified on-chain at the required depth (or by the test-mode helper)."""

    refund_id: str
    network: str
    tx_hash: str
    token_address: str


class RecordCardRefund(_Command, tag="record_card_refund"):
    """What the card provider says of the refund it was sent: from the service's own call, its polling, or the
    provider's webhook. `provider_refund_id` is empty when the provider refused before making one."""

    refund_id: str
    provider_refund_id: str
    status: str  # pending, succeeded, failed or canceled
    attempt: int = 0
    reason: str | None = None


class RetryRefund(_Command, tag="retry_refund"):
    """Send a card refund the provider refused to the provider again."""

    refund_id: str


class MintRefundToken(_Command, tag="mint_refund_token"):
    token: str
    ref_type: str
    ref_value: str
    amount: int | None  # None: the whole refundable balance at mint time (the legacy body)
    expires_at: datetime
    source: str
    metadata: dict[str, str] = {}
    hide_summary: bool = False
    hide_header: bool = False


class CancelRefundToken(_Command, tag="cancel_refund_token"):
    token: str
    reason: str | None = None


class ExpireRefundToken(_Command, tag="expire_refund_token"):
    token: str


class RequestTokenRenewal(_Command, tag="request_token_renewal"):
    token: str
    customer_note: str | None = None


class ApproveTokenRenewal(_Command, tag="approve_token_renewal"):
    token: str
    new_token: str
    expires_at: datetime


Command = Union[
    CreateOrder,
    OpenSession,
    CancelOrder,
    ReopenOrder,
    ResolveOrder,
    ExpireSession,
    ConfirmPayment,
    CreateRefund,
    ApproveRefund,
    RejectRefund,
    CancelRefund,
    SubmitRefundTx,
    FailRefundTx,
    ConfirmRefundTransfer,
    RecordCardRefund,
    RetryRefund,
    MintRefundToken,
    CancelRefundToken,
    ExpireRefundToken,
    RequestTokenRenewal,
    ApproveTokenRenewal,
]


# Events: past tense, tag = the public event type.


class _Event(msgspec.Struct, frozen=True, gc=False, tag_field="type", kw_only=True):
    at: datetime


class OrderCreated(_Event, tag="order.created"):
    order_id: str
    merchant_id: str
    livemode: bool
    order_number: int
    amount: int
    line_items: tuple[LineItem, ...] = ()
    external_ref: str | None = None
    metadata: dict[str, str] = {}
    receipt_url: str | None = None
    payment_link_id: str | None = None
    customer_email: str | None = None


class SessionOpened(_Event, tag="checkout_session.created"):
    session: NewSession
    amount_due: int


class SessionSuperseded(_Event, tag="checkout_session.superseded"):
    session_id: str


class SessionExpired(_Event, tag="checkout_session.expired"):
    session_id: str


class SessionCompleted(_Event, tag="checkout_session.completed"):
    session_id: str


class PaymentReceived(_Event, tag="payment.received"):
    payment_id: str
    network: str
    tx_hash: str
    token_address: str
    amount: int
    session_id: str | None = None
    # Money that reached a canceled order is kept and shown, never dropped.
    late: bool = False
    card_brand: str = ""
    card_last4: str = ""


class OrderPartiallyPaid(_Event, tag="order.partially_paid"):
    amount_paid: int
    amount_due: int


class OrderPaid(_Event, tag="payment.settled"):
    amount_paid: int


class OrderResolved(_Event, tag="order.resolved"):
    amount_paid: int


class OrderCanceled(_Event, tag="order.canceled"):
    reason: str
    note: str | None = None


class OrderReopened(_Event, tag="order.reopened"):
    pass


class RefundRequested(_Event, tag="payment.refund.requested"):
    refund_id: str
    link_token: str
    amount: int
    reason: str
    destination: Destination
    flow: str  # "merchant" or "customer"
    note: str | None = None
    token: str | None = None


class RefundApproved(_Event, tag="payment.refund.approved"):
    refund_id: str
    amount: int


class RefundRejected(_Event, tag="payment.refund.rejected"):
    refund_id: str
    amount: int
    reason: str | None = None


class RefundCanceled(_Event, tag="payment.refund.canceled"):
    """An approved refund withdrawn before execution; the refund ends REJECTED."""

    refund_id: str
    amount: int


class RefundTxSubmitted(_Event, tag="payment.refund.tx_submitted"):
    refund_id: str
    network: str
    tx_hash: str
    token_address: str


class RefundTxFailed(_Event, tag="payment.refund.tx_failed"):
    """The refund stays APPROVED for another transaction."""

    refund_id: str
    network: str
    tx_hash: str
    reason: str


class RefundExecuted(_Event, tag="payment.refund.executed"):
    refund_id: str
    amount: int
    network: str
    tx_hash: str
    token_address: str


class RefundRetried(_Event, tag="payment.refund.retried"):
    """A card refund the provider refused goes to the provider once more; the refund is still APPROVED."""

    refund_id: str
    amount: int


class TokenMinted(_Event, tag="refund_request.created"):
    token: str
    ref_type: str
    ref_value: str
    amount: int
    expires_at: datetime
    source: str
    metadata: dict[str, str] = {}
    hide_summary: bool = False
    hide_header: bool = False


class TokenSubmitted(_Event, tag="refund_request.submitted"):
    token: str
    refund_id: str


class TokenExpired(_Event, tag="refund_request.expired"):
    token: str


class TokenCanceled(_Event, tag="refund_request.canceled"):
    token: str
    reason: str | None = None


class RenewalRequested(_Event, tag="refund_request.renewal_requested"):
    token: str
    customer_note: str | None = None


class TokenRenewed(_Event, tag="refund_request.renewed"):
    old_token: str
    new_token: str


Event = Union[
    OrderCreated,
    SessionOpened,
    SessionSuperseded,
    SessionExpired,
    SessionCompleted,
    PaymentReceived,
    OrderPartiallyPaid,
    OrderPaid,
    OrderResolved,
    OrderCanceled,
    OrderReopened,
    RefundRequested,
    RefundApproved,
    RefundRejected,
    RefundCanceled,
    RefundTxSubmitted,
    RefundTxFailed,
    RefundExecuted,
    RefundRetried,
    TokenMinted,
    TokenSubmitted,
    TokenExpired,
    TokenCanceled,
    RenewalRequested,
    TokenRenewed,
]


class Envelope(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """What travels on a command stream: the command plus how to answer it."""

    command_id: str
    command: Command
    reply_to: str = ""
    # Hash of the HTTP request that produced the command: a reused Idempotency-Key with
    # another body is refused by comparing it.
    request_hash: str = ""
    # A repeated request signature with an Idempotency-Key: only an answer already recorded for this command
    # may serve it; the command itself is never applied from such an envelope (web/edge/auth.py).
    recorded_only: bool = False
    # The X-Request-Id of the HTTP request that sent the command, for the logs of the actors and of the webhooks its
    # events cause; empty for commands of the scheduler and the watchers, and on entries written before it existed.
    request_id: str = ""


class DomainFailure(msgspec.Struct, frozen=True, gc=False):
    status: int
    code: str
    message: str
    param: str | None = None


class Addressed(msgspec.Struct, frozen=True):
    """What an entry says of its command even when the rest of it does not decode: who waits for the answer."""

    command_id: str = ""
    reply_to: str | None = None


class Reply(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    command_id: str
    ok: bool
    # The order's read view after the command (actors.views.OrderView), as JSON.
    state: msgspec.Raw = msgspec.Raw(b"null")
    error: DomainFailure | None = None

