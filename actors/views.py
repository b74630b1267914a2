"""The order's read view, mapped field by field from the state: the one place that knows both shapes.

The state alone is stored (`orders.state`): every reader maps it here, so a command writes the order's JSON once."""

from __future__ import annotations

from actors import schema
from actors.state import Order, Payment, Refund, RefundToken, Session, TxAttempt
from readmodel.order import (
    LineItemView,
    OrderView,
    PaymentView,
    RefundView,
    SessionView,
    TokenView,
    TransferView,
)


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
