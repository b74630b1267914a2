"""From the order's state to the API's public shapes (contract/api.py): one explicit mapping per shape."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

import msgspec
from aiohttp import web

from actors.views import OrderView, RefundView, SessionView, TokenView
from common import money
from common.clock import iso
from common.config import Settings
from contract import api as contract
from web.api.receipts import paid_receipt_url
from web.edge.app_state import ctx

_encode = msgspec.json.Encoder().encode
R = TypeVar("R", bound=contract.Refund)
T = TypeVar("T", bound=contract.RefundRequest)


def respond(data: Any, status: int = 200) -> web.Response:
    """A JSON answer, encoded by msgspec (several times faster than the json module)."""
    return web.Response(body=_encode(data), status=status, content_type="application/json")


def checkout_url(settings: Settings, session_key: str) -> str:
    return f"{settings.checkout_base()}/c/{session_key}"


def session_json(settings: Settings, order: OrderView, s: SessionView) -> contract.CheckoutSession:
    return contract.CheckoutSession(
        session_id=s.session_id,
        session_key=s.session_key,
        order_id=order.order_id,
        status=s.status.value,
        amount_due=money.format(s.amount_due),
        checkout_url=checkout_url(settings, s.session_key),
        expires_at=iso(s.expires_at),
        success_url=s.success_url,
        cancel_url=s.cancel_url,
        created_at=iso(s.created_at),
    )


def order_json(settings: Settings, order: OrderView) -> contract.Order:
    return contract.Order(
        order_id=order.order_id,
        order_number=str(order.order_number),
        livemode=order.livemode,
        status=order.status.value,
        amount=money.format(order.amount_owed),
        amount_owed=money.format(order.amount_owed),
        amount_paid=money.format(order.amount_paid),
        amount_refunded=money.format(order.amount_refunded),
        amount_due=money.format(order.residual),
        line_items=[
            contract.LineItem(name=item.name, quantity=item.quantity, unit_amount=money.format(item.unit_amount),
                              amount=money.format(item.unit_amount * item.quantity))
            for item in order.line_items
        ],
        external_ref=order.external_ref,
        metadata=dict(order.metadata),
        payments=[
            contract.Payment(payment_id=p.payment_id, network=p.network, tx_hash=p.tx_hash,
                             token_address=p.token_address, amount=money.format(p.amount), session_id=p.session_id,
                             late=p.late, received_at=iso(p.received_at))
            for p in order.payments
        ],
        sessions=[session_json(settings, order, s) for s in order.sessions],
        created_at=iso(order.created_at),
        updated_at=iso(order.updated_at),
        receipt_url=paid_receipt_url(order),
        payment_link_id=order.payment_link_id,
        customer_email=order.customer_email,
    )


def order_answer(request: web.Request, order: OrderView) -> contract.Order:
    return order_json(ctx(request).settings, order)


def session_created_answer(request: web.Request, order: OrderView) -> contract.SessionCreated:
    return session_created_json(ctx(request).settings, order)


def session_created_json(settings: Settings, order: OrderView) -> contract.SessionCreated:
    s = order.sessions[-1]
    return contract.SessionCreated(
        order_id=order.order_id,
        order_number=str(order.order_number),
        session_id=s.session_id,
        session_key=s.session_key,
        checkout_url=checkout_url(settings, s.session_key),
        expires_at=iso(s.expires_at),
        amount_due=money.format(s.amount_due),
        status=s.status.value,
        order=order_json(settings, order),
    )


def refund_json(settings: Settings, order: OrderView, r: RefundView, shape: type[R] = contract.Refund, **extra) -> R:
    """The refund as `shape`: the plain refund, or one of the answers that add to it (extra gives their fields)."""
    return shape(
        refund_id=r.refund_id,
        order_id=order.order_id,
        livemode=order.livemode,
        status=r.status.value,
        amount=money.format(r.amount),
        reason=r.reason,
        refund_to_address=r.refund_to_address,
        refund_network=r.refund_network,
        refund_token_address=r.refund_token_address,
        source=r.source,
        metadata={"note": r.note} if r.note else {},
        link_token=r.link_token,
        link_token_camel=r.link_token,
        status_url=f"{settings.checkout_base()}/r/{r.link_token}",
        refund_request_token=r.token,
        rejection_reason=r.rejection_reason,
        execution=contract.Execution(tx_hash=r.executed_tx_hash, network=r.executed_network,
                                     token_address=r.executed_token_address) if r.executed_tx_hash else None,
        created_at=iso(r.created_at),
        updated_at=iso(r.updated_at),
        **extra,
    )


def token_json(settings: Settings, order: OrderView, t: TokenView, now: datetime,
               shape: type[T] = contract.RefundRequest, **extra) -> T:
    return shape(
        token=t.token,
        refund_url=f"{settings.checkout_base()}/refund-request/{t.token}",
        status=t.status_at(now).value,
        order_id=order.order_id,
        livemode=order.livemode,
        ref_type=t.ref_type,
        ref_value=t.ref_value,
        amount=money.format(t.amount),
        expires_at=iso(t.expires_at),
        source=t.source,
        metadata=dict(t.metadata),
        hide_summary=t.hide_summary,
        hide_header=t.hide_header,
        refund_id=t.refund_id,
        customer_note=t.customer_note,
        cancel_reason=t.cancel_reason,
        replaced_by=t.replaced_by,
        created_at=iso(t.created_at),
        **extra,
    )
