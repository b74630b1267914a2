"""The read view of one order, as the order actor answers it in its replies and readers map it from `orders.state`.

Its field names are the view's own: the actor maps its state onto them explicitly (actors/views.py), so a
renamed field of the aggregate never reaches a reader. The shape is the aggregate's as it stood at schema 1,
which is why views recorded before this module existed (migration 013 and recorded replies) read as views.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from readmodel.lookups import OrderLookups, RefundLookups, TokenLookups
from readmodel.statuses import OrderStatus, RefundStatus, SessionStatus, TokenStatus

# Frozen data, never part of a reference cycle: not tracked by the garbage collector.


class LineItemView(msgspec.Struct, frozen=True, gc=False):
    name: str
    quantity: int
    unit_amount: int  # micro-USD


class SessionView(msgspec.Struct, frozen=True, gc=False):
    session_id: str
    session_key: str
    amount_due: int
    expires_at: datetime
    created_at: datetime
    status: SessionStatus = SessionStatus.OPEN
    success_url: str | None = None
    cancel_url: str | None = None


class PaymentView(msgspec.Struct, frozen=True, gc=False):
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


class TransferView(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """A transaction the merchant posted for a refund, and what verification made of it."""

    network: str
    tx_hash: str
    token_address: str
    submitted_at: datetime
    status: str = "verifying"  # verifying, failed, executed
    reason: str | None = None


class RefundView(msgspec.Struct, RefundLookups, frozen=True, gc=False, kw_only=True):
    refund_id: str
    link_token: str
    amount: int
    reason: str
    refund_to_address: str
    refund_network: str
    refund_token_address: str
    source: str  # "merchant" or "customer"
    created_at: datetime
    updated_at: datetime
    status: RefundStatus = RefundStatus.PENDING
    note: str | None = None
    token: str | None = None
    rejection_reason: str | None = None
    executed_tx_hash: str | None = None
    executed_network: str | None = None
    executed_token_address: str | None = None
    attempts: tuple[TransferView, ...] = ()
    retries: int = 0


class TokenView(msgspec.Struct, TokenLookups, frozen=True, gc=False, kw_only=True):
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


class OrderView(msgspec.Struct, OrderLookups, frozen=True, gc=False, kw_only=True):
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
    line_items: tuple[LineItemView, ...] = ()
    external_ref: str | None = None
    metadata: dict[str, str] = {}
    sessions: tuple[SessionView, ...] = ()
    payments: tuple[PaymentView, ...] = ()
    version: int = 0
    refunds: tuple[RefundView, ...] = ()
    tokens: tuple[TokenView, ...] = ()
    receipt_url: str | None = None  # as the order was created with it; readers derive it for older orders
    payment_link_id: str | None = None
    customer_email: str | None = None


decode = msgspec.json.Decoder(OrderView).decode
