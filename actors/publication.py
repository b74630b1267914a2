"""The public form of an event: the envelope merchants read and webhooks deliver, its data mapped explicitly from
the event and the order (contract/events.py), so no internal rename can reach a payload and none carries
`external_ref` (docs/spec.md §6).
"""

from __future__ import annotations

from typing import Any

import msgspec

from actors import messages as m
from actors.order import Order, evolve
from actors.statuses import OrderStatus
from common import money
from common.clock import iso
from contract import events as ev


class PublicEvent(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    type: str
    created_at: str
    livemode: bool
    data: Any  # a contract.events struct when published; a dict when read back off the stream
    # Routing facts for consumers of the stream; not part of the merchant-facing envelope.
    merchant_id: str
    order_id: str
    seq: int


def _refund(order: Order, refund_id: str, **fields) -> dict[str, Any]:
    """A refund's current facts, so each of its events tells the whole story."""
    r = order.refund(refund_id)
    return dict(refund_id=r.refund_id, refund_status=r.status.value, amount=money.format(r.amount), reason=r.reason,
                refund_to_address=r.refund_to_address, refund_network=r.refund_network,
                refund_token_address=r.refund_token_address, link_token=r.link_token) | fields


def _token(order: Order, token: str) -> dict[str, Any]:
    """A refund request's current facts."""
    t = order.token(token)
    return dict(refund_request_status=t.status.value, amount=money.format(t.amount), expires_at=iso(t.expires_at),
                ref_type=t.ref_type, ref_value=t.ref_value)


def public_data(event: m.Event, order: Order, order_status: OrderStatus):
    """The event's public data: one explicit mapping per event type, from the event and the order after it."""
    o = dict(order_id=order.order_id, order_number=str(order.order_number), order_status=order_status.value)
    match event:
        case m.OrderCreated():
            items = [ev.LineItem(name=i.name, quantity=i.quantity, unit_amount=money.format(i.unit_amount))
                     for i in event.line_items]
            return ev.OrderCreated(**o, amount=money.format(event.amount), line_items=items,
                                   metadata=dict(event.metadata), payment_link_id=event.payment_link_id)
        case m.SessionOpened():
            s = event.session
            return ev.SessionCreated(**o, amount_due=money.format(event.amount_due), session_id=s.session_id,
                                     session_key=s.session_key, expires_at=iso(s.expires_at),
                                     success_url=s.success_url, cancel_url=s.cancel_url)
        case m.SessionSuperseded() | m.SessionExpired() | m.SessionCompleted():
            return ev.SessionChanged(**o, session_id=event.session_id)
        case m.PaymentReceived():
            return ev.PaymentReceived(**o, payment_id=event.payment_id, network=event.network, tx_hash=event.tx_hash,
                                      token_address=event.token_address, amount=money.format(event.amount),
                                      session_id=event.session_id, late=event.late)
        case m.OrderPartiallyPaid():
            return ev.OrderPartiallyPaid(**o, amount_paid=money.format(event.amount_paid),
                                         amount_due=money.format(event.amount_due))
        case m.OrderPaid() | m.OrderResolved():
            return ev.OrderSettled(**o, amount_paid=money.format(event.amount_paid), receipt_url=order.receipt_url,
                                   payment_link_id=order.payment_link_id)
        case m.OrderCanceled():
            return ev.OrderCanceled(**o, reason=event.reason, note=event.note)
        case m.OrderReopened():
            return ev.OrderReopened(**o)
        case m.RefundRequested():
            return ev.RefundRequested(**o, **_refund(order, event.refund_id), source=event.flow, note=event.note,
                                      token=event.token)
        case m.RefundApproved() | m.RefundCanceled() | m.RefundRetried():
            return ev.RefundChanged(**o, **_refund(order, event.refund_id))
        case m.RefundRejected():
            return ev.RefundChanged(**o, **_refund(order, event.refund_id, reason=event.reason))
        case m.RefundTxSubmitted() | m.RefundExecuted():
            receipt = order.receipt_url if isinstance(event, m.RefundExecuted) else None
            return ev.RefundTransfer(**o, **_refund(order, event.refund_id), network=event.network,
                                     tx_hash=event.tx_hash, token_address=event.token_address, receipt_url=receipt)
        case m.RefundTxFailed():
            return ev.RefundTransferFailed(**o, **_refund(order, event.refund_id, reason=event.reason),
                                           network=event.network, tx_hash=event.tx_hash)
        case m.TokenSubmitted():
            return ev.TokenSubmitted(**o, **_refund(order, event.refund_id), token=event.token)
        case m.TokenMinted():
            return ev.TokenCreated(**o, token=event.token, **_token(order, event.token), source=event.source,
                                   metadata=dict(event.metadata), hide_summary=event.hide_summary,
                                   hide_header=event.hide_header)
        case m.TokenExpired():
            return ev.TokenExpired(**o, token=event.token, **_token(order, event.token))
        case m.TokenCanceled():
            return ev.TokenCanceled(**o, token=event.token, **_token(order, event.token), reason=event.reason)
        case m.RenewalRequested():
            return ev.RenewalRequested(**o, token=event.token, **_token(order, event.token),
                                       customer_note=event.customer_note)
        case m.TokenRenewed():
            return ev.TokenRenewed(**o, old_token=event.old_token, new_token=event.new_token,
                                   **_token(order, event.old_token))
    raise TypeError(f"no public form for {type(event).__name__}")


def publish(event_id: str, seq: int, event: m.Event, order: Order, order_status: OrderStatus) -> PublicEvent:
    """`order` is the state right after the event; `order_status` the order's status once the whole transition the
    event belongs to is applied (`transition`)."""
    return PublicEvent(
        id=event_id,
        type=event.__struct_config__.tag,
        created_at=iso(event.at),
        livemode=order.livemode,
        data=public_data(event, order, order_status),
        merchant_id=order.merchant_id,
        order_id=order.order_id,
        seq=seq,
    )


def transition(before: Order | None, events: list[m.Event]) -> list[tuple[m.Event, Order, OrderStatus]]:
    """Each event of one command's transition with the state right after it and the status the order has once the
    transition is whole. The events of a transition are committed together, so no reader ever sees the order between
    them: a `payment.received` that makes the order PAID says PAID, as the `payment.settled` beside it does, and a
    merchant acting on any one of them reads the order's true status (docs/webhooks.md, `order_status`)."""
    states, state = [], before
    for event in events:
        state = evolve(state, event)
        states.append(state)
    return [(event, after, state.status) for event, after in zip(events, states)]
