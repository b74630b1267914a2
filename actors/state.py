"""The state of one order aggregate: the Order with its sessions, payments, refunds and tokens.

The actor alone reads and writes it (stored as `orders.state`, schema in actors/schema.py); readers see
actors.views.OrderView.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from actors import messages as m
from actors.rules import OrderRules, RefundRules, TokenRules
from actors.statuses import OrderStatus, RefundStatus, SessionStatus, TokenStatus

# Every struct here is frozen data decoded from or encoded to JSON and can never be part of a reference
# cycle, so none is tracked by the garbage collector (gc=False): an actor worker holds up to 50,000
# orders in memory, and full collections walking them all paused it for tens of milliseconds.


class Session(msgspec.Struct, frozen=True, gc=False):
    session_id: str
    session_key: str
    amount_due: int
    expires_at: datetime
    created_at: datetime
    status: SessionStatus = SessionStatus.OPEN
    success_url: str | None = None
    cancel_url: str | None = None


class Payment(msgspec.Struct, frozen=True, gc=False):
    payment_id: str
    network: str
    tx_hash: str
    token_address: str
    amount: int
    received_at: datetime
    session_id: str | None = None
    late: bool = False
    card_brand: str = ""
    card_last4: str = ""


class TxAttempt(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """A transaction the merchant posted for a refund, and what verification made of it."""

    network: str
    tx_hash: str
    token_address: str
    submitted_at: datetime
    status: str = "verifying"  # verifying, failed, executed
    reason: str | None = None


class Refund(msgspec.Struct, RefundRules, frozen=True, gc=False, kw_only=True):
    refund_id: str
    link_token: str
    amount: int
    reason: str
    refund_to_address: str
    refund_network: str
    refund_token_address: str
    flow: str  # "merchant" or "customer"
    created_at: datetime
    updated_at: datetime
    status: RefundStatus = RefundStatus.PENDING
    note: str | None = None
    token: str | None = None  # the refund-request token it was submitted through
    rejection_reason: str | None = None
    executed_tx_hash: str | None = None
    executed_network: str | None = None
    executed_token_address: str | None = None
    attempts: tuple[TxAttempt, ...] = ()
    retries: int = 0  # card refunds: how many times the merchant sent a refused refund to the provider again


class RefundToken(msgspec.Struct, TokenRules, frozen=True, gc=False, kw_only=True):
    token: str
    ref_type: str
    ref_value: str
    amount: int  # the ceiling a buyer may ask for
    expires_at: datetime
    created_at: datetime
    source: str  # b2b, dashboard or renewal
    status: TokenStatus = TokenStatus.ACTIVE
    metadata: dict[str, str] = {}
    hide_summary: bool = False
    hide_header: bool = False
    refund_id: str | None = None
    customer_note: str | None = None
    cancel_reason: str | None = None
    replaced_by: str | None = None


class Order(msgspec.Struct, OrderRules, frozen=True, gc=False, kw_only=True):
    order_id: str
    merchant_id: str
    livemode: bool
    order_number: int
    amount_owed: int
    created_at: datetime
    updated_at: datetime
    status: OrderStatus = OrderStatus.PENDING
    amount_paid: int = 0
    amount_refunded: int = 0
    line_items: tuple[m.LineItem, ...] = ()
    external_ref: str | None = None
    metadata: dict[str, str] = {}
    sessions: tuple[Session, ...] = ()
    payments: tuple[Payment, ...] = ()
    version: int = 0
    refunds: tuple[Refund, ...] = ()
    tokens: tuple[RefundToken, ...] = ()
    receipt_url: str | None = None  # made with the order, shown by every reader; none for orders made before receipts
    payment_link_id: str | None = None
    customer_email: str | None = None
