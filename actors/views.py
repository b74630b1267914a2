"""The order's read view, and its one derivation from the state: what every reader and every reply sees.

Readers (web, dashboard, pages, watchers, the card refund sender) see these structs, mapped from `orders.state` by
`stored_view` or decoded from an actor's reply, never the aggregate itself: the aggregate and its stored shape can
change without them. The view's field names are its own (the state's `Refund.flow` is the view's `source`), as
readers were first given them; the state alone is stored, so a command writes the order's JSON once.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from actors import schema
from actors.rules import OrderRules, RefundRules, TokenRules
from actors.state import Order, Payment, Refund, RefundToken, Session, TxAttempt
from actors.statuses import OrderStatus, RefundStatus, SessionStatus, TokenStatus

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


class RefundView(msgspec.Struct, RefundRules, frozen=True, gc=False, kw_only=True):
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


class TokenView(msgspec.Struct, TokenRules, frozen=True, gc=False, kw_only=True):
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


class OrderView(msgspec.Struct, OrderRules, frozen=True, gc=False, kw_only=True):
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


def _session(s: Session) -> SessionView:
    return SessionView(session_id=s.session_id, session_key=s.session_key, amount_due=s.amount_due,
                       expires_at=s.expires_at, created_at=s.created_at, status=s.status, success_url=s.success_url,
                       cancel_url=s.cancel_url)


def _payment(p: Payment) -> PaymentView:
    return PaymentView(payment_id=p.payment_id, network=p.network, tx_hash=p.tx_hash, token_address=p.token_address,
                       amount=p.amount, received_at=p.received_at, session_id=p.session_id, late=p.late,
                       card_brand=p.card_brand, card_last4=p.card_last4)


def _transfer(a: TxAttempt) -> TransferView:
    return TransferView(network=a.network, tx_hash=a.tx_hash, token_address=a.token_address,
                        submitted_at=a.submitted_at, status=a.status, reason=a.reason)


def _refund(r: Refund) -> RefundView:
    return RefundView(
        refund_id=r.refund_id, link_token=r.link_token, amount=r.amount, reason=r.reason,
        refund_to_address=r.refund_to_address, refund_network=r.refund_network,
        refund_token_address=r.refund_token_address, source=r.flow, created_at=r.created_at, updated_at=r.updated_at,
        status=r.status, note=r.note, token=r.token, rejection_reason=r.rejection_reason,
        executed_tx_hash=r.executed_tx_hash, executed_network=r.executed_network,
        executed_token_address=r.executed_token_address, attempts=tuple(_transfer(a) for a in r.attempts),
        retries=r.retries,
    )


def _token(t: RefundToken) -> TokenView:
    return TokenView(
        token=t.token, ref_type=t.ref_type, ref_value=t.ref_value, amount=t.amount, expires_at=t.expires_at,
        created_at=t.created_at, source=t.source, status=t.status, metadata=t.metadata, hide_summary=t.hide_summary,
        hide_header=t.hide_header, refund_id=t.refund_id, customer_note=t.customer_note,
        cancel_reason=t.cancel_reason, replaced_by=t.replaced_by,
    )


def view_of(o: Order) -> OrderView:
    return OrderView(
        order_id=o.order_id, merchant_id=o.merchant_id, livemode=o.livemode, order_number=o.order_number,
        amount_owed=o.amount_owed, created_at=o.created_at, updated_at=o.updated_at, status=o.status,
        amount_paid=o.amount_paid, amount_refunded=o.amount_refunded,
        line_items=tuple(LineItemView(i.name, i.quantity, i.unit_amount) for i in o.line_items),
        external_ref=o.external_ref, metadata=o.metadata, sessions=tuple(_session(s) for s in o.sessions),
        payments=tuple(_payment(p) for p in o.payments), version=o.version,
        refunds=tuple(_refund(r) for r in o.refunds), tokens=tuple(_token(t) for t in o.tokens),
        receipt_url=o.receipt_url, payment_link_id=o.payment_link_id, customer_email=o.customer_email,
    )


def stored_view(state: str | bytes, state_schema: int) -> OrderView:
    """The view of an order as stored (`orders.state` and `orders.state_schema`)."""
    return view_of(schema.snapshot(state, state_schema))
