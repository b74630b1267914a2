"""The Order aggregate: frozen state, `decide` (command -> events) and `evolve` (event -> state).

Pure: no I/O, no clock, no randomness; time and ids arrive inside the command.
"""

from __future__ import annotations

from datetime import datetime

from msgspec.structs import replace

from actors import invariants, refunds, tokens
from actors import messages as m
from actors.errors import Refused, conflict, not_found
from actors.state import Order, OrderStatus, Payment, Session, SessionStatus

__all__ = ["Order", "OrderStatus", "Session", "SessionStatus", "decide", "evolve", "replay", "run"]


# PARTIAL_PAID counts as unpaid: docs/spec.md §3.3's third underpayment option is to cancel and refund.
UNPAID = {OrderStatus.PENDING, OrderStatus.PARTIAL_PAID}
# A new session may collect the whole amount again (retry) or the residual of an underpayment.
SESSION_OPENABLE = {OrderStatus.PENDING, OrderStatus.PARTIAL_PAID}


def decide(order: Order | None, cmd: m.Command) -> list[m.Event]:
    invariants.check(cmd)
    if isinstance(cmd, m.CreateOrder):
        return _create(order, cmd)
    if order is None or order.merchant_id != cmd.merchant_id or order.livemode != cmd.livemode:
        raise not_found()
    match cmd:
        case m.OpenSession():
            return _open_session(order, cmd)
        case m.CancelOrder():
            return _cancel(order, cmd)
        case m.ReopenOrder():
            return _reopen(order, cmd)
        case m.ResolveOrder():
            return _resolve(order, cmd)
        case m.ExpireSession():
            return _expire(order, cmd)
        case m.ConfirmPayment():
            return _pay(order, cmd)
        case m.CreateRefund() if cmd.token is not None:
            return tokens.submit(order, cmd)
        case m.CreateRefund():
            return refunds.create(order, cmd)
        case m.ApproveRefund():
            return refunds.approve(order, cmd)
        case m.RejectRefund():
            return refunds.reject(order, cmd)
        case m.CancelRefund():
            return refunds.cancel(order, cmd)
        case m.SubmitRefundTx():
            return refunds.submit_tx(order, cmd)
        case m.FailRefundTx():
            return refunds.fail_tx(order, cmd)
        case m.ConfirmRefundTransfer():
            return refunds.execute(order, cmd)
        case m.RecordCardRefund():
            return refunds.record_card(order, cmd)
        case m.RetryRefund():
            return refunds.retry(order, cmd)
        case m.MintRefundToken():
            return tokens.mint(order, cmd)
        case m.CancelRefundToken():
            return tokens.cancel(order, cmd)
        case m.ExpireRefundToken():
            return tokens.expire(order, cmd)
        case m.RequestTokenRenewal():
            return tokens.request_renewal(order, cmd)
        case m.ApproveTokenRenewal():
            return tokens.approve_renewal(order, cmd)
    raise TypeError(f"unhandled command {type(cmd).__name__}")


def _create(order: Order | None, cmd: m.CreateOrder) -> list[m.Event]:
    if order is not None:
        raise conflict("order_exists", "An order with this id already exists.", "order_id")
    events: list[m.Event] = [
        m.OrderCreated(
            at=cmd.at,
            order_id=cmd.order_id,
            merchant_id=cmd.merchant_id,
            livemode=cmd.livemode,
            order_number=cmd.order_number,
            amount=cmd.amount,
            line_items=cmd.line_items,
            external_ref=cmd.external_ref,
            metadata=cmd.metadata,
            receipt_url=cmd.receipt_url,
            payment_link_id=cmd.payment_link_id,
            customer_email=cmd.customer_email,
        )
    ]
    if cmd.session is not None:
        events.append(m.SessionOpened(at=cmd.at, session=cmd.session, amount_due=cmd.amount))
    return events


def _supersede(order: Order, at: datetime) -> list[m.Event]:
    live = order.live_session()
    return [m.SessionSuperseded(at=at, session_id=live.session_id)] if live else []


def _open_session(order: Order, cmd: m.OpenSession) -> list[m.Event]:
    if order.status not in SESSION_OPENABLE:
        raise conflict(
            "order_not_payable",
            f"A session can only be opened on a PENDING or PARTIAL_PAID order; this one is {order.status.value}.",
        )
    if cmd.amount_due is not None and cmd.amount_due != order.residual:
        raise Refused(
            422,
            "amount_due_mismatch",
            "amount_due must equal the amount still owed on the order.",
            "amount_due",
        )
    return _supersede(order, cmd.at) + [
        m.SessionOpened(at=cmd.at, session=cmd.session, amount_due=order.residual)
    ]


def _cancel(order: Order, cmd: m.CancelOrder) -> list[m.Event]:
    if order.status not in UNPAID:
        raise conflict(
            "order_not_cancelable",
            f"Only an unpaid or partially paid order can be canceled; this one is {order.status.value}.",
        )
    return _close_sessions(order, cmd.at) + [m.OrderCanceled(at=cmd.at, reason=cmd.reason, note=cmd.note)]


def _close_sessions(order: Order, at: datetime) -> list[m.Event]:
    live = order.live_session()
    return [m.SessionExpired(at=at, session_id=live.session_id)] if live else []


def _reopen(order: Order, cmd: m.ReopenOrder) -> list[m.Event]:
    if order.status is not OrderStatus.CANCELED or order.metadata.get("canceled_reason") != "payment_timeout":
        raise conflict(
            "order_not_reopenable",
            "Only an order canceled with reason payment_timeout can be reopened.",
        )
    return [
        m.OrderReopened(at=cmd.at),
        m.SessionOpened(at=cmd.at, session=cmd.session, amount_due=order.residual),
    ]


def _resolve(order: Order, cmd: m.ResolveOrder) -> list[m.Event]:
    if order.status is not OrderStatus.PARTIAL_PAID:
        raise conflict("order_not_resolvable", "Only a PARTIAL_PAID order can be accepted and resolved.")
    return _close_sessions(order, cmd.at) + [m.OrderResolved(at=cmd.at, amount_paid=order.amount_paid)]


def _expire(order: Order, cmd: m.ExpireSession) -> list[m.Event]:
    session = next((s for s in order.sessions if s.session_id == cmd.session_id), None)
    if session is None:
        raise not_found("session")
    # The scheduler may fire again, or after a payment: a session no longer open is left alone.
    if session.status is not SessionStatus.OPEN or cmd.at < session.expires_at:
        return []
    events: list[m.Event] = [m.SessionExpired(at=cmd.at, session_id=session.session_id)]
    if order.status is OrderStatus.PENDING:
        events.append(m.OrderCanceled(at=cmd.at, reason="payment_timeout"))
    return events


def _pay(order: Order, cmd: m.ConfirmPayment) -> list[m.Event]:
    if any(p.network == cmd.network and p.tx_hash == cmd.tx_hash for p in order.payments):
        return []  # a watcher restart or a second report of one transfer
    late = order.status is OrderStatus.CANCELED
    session_id = cmd.session_id or (s.session_id if (s := order.live_session()) else None)
    events: list[m.Event] = [
        m.PaymentReceived(
            at=cmd.at,
            payment_id=cmd.payment_id,
            network=cmd.network,
            tx_hash=cmd.tx_hash,
            token_address=cmd.token_address,
            amount=cmd.amount,
            session_id=session_id,
            late=late,
            card_brand=cmd.card_brand,
            card_last4=cmd.card_last4,
        )
    ]
    if order.status not in (OrderStatus.PENDING, OrderStatus.PARTIAL_PAID):
        return events  # recorded and shown on the order; the status is already settled or closed
    paid = order.amount_paid + cmd.amount
    if paid >= order.amount_owed:
        live = order.live_session()
        if live is not None:
            events.append(m.SessionCompleted(at=cmd.at, session_id=live.session_id))
        events.append(m.OrderPaid(at=cmd.at, amount_paid=paid))
    else:
        events.append(
            m.OrderPartiallyPaid(at=cmd.at, amount_paid=paid, amount_due=order.amount_owed - paid)
        )
    return events


def evolve(order: Order | None, event: m.Event) -> Order:
    if isinstance(event, m.OrderCreated):
        return Order(
            order_id=event.order_id,
            merchant_id=event.merchant_id,
            livemode=event.livemode,
            order_number=event.order_number,
            amount_owed=event.amount,
            line_items=event.line_items,
            external_ref=event.external_ref,
            metadata=dict(event.metadata),
            created_at=event.at,
            updated_at=event.at,
            version=1,
            receipt_url=event.receipt_url,
            payment_link_id=event.payment_link_id,
            customer_email=event.customer_email,
        )
    assert order is not None, "only OrderCreated starts an order"
    order = replace(order, updated_at=event.at, version=order.version + 1)
    if isinstance(event, refunds.EVENTS):
        return refunds.evolve(order, event)
    if isinstance(event, tokens.EVENTS):
        return tokens.evolve(order, event)
    match event:
        case m.SessionOpened():
            s = event.session
            session = Session(
                session_id=s.session_id,
                session_key=s.session_key,
                amount_due=event.amount_due,
                expires_at=s.expires_at,
                created_at=event.at,
                success_url=s.success_url,
                cancel_url=s.cancel_url,
            )
            return replace(order, sessions=order.sessions + (session,))
        case m.SessionSuperseded():
            return _set_session(order, event.session_id, SessionStatus.SUPERSEDED)
        case m.SessionExpired():
            return _set_session(order, event.session_id, SessionStatus.EXPIRED)
        case m.SessionCompleted():
            return _set_session(order, event.session_id, SessionStatus.COMPLETED)
        case m.PaymentReceived():
            payment = Payment(
                payment_id=event.payment_id,
                network=event.network,
                tx_hash=event.tx_hash,
                token_address=event.token_address,
                amount=event.amount,
                received_at=event.at,
                session_id=event.session_id,
                late=event.late,
                card_brand=event.card_brand,
                card_last4=event.card_last4,
            )
            # Money reaching an order refunded in full (a buyer paying twice) leaves a paid balance: the order is
            # partially refunded again, as docs/spec.md §3.3 defines the two statuses, and its new balance can be
            # refunded.
            status = OrderStatus.PARTIALLY_REFUNDED if order.status is OrderStatus.REFUNDED else order.status
            return replace(order, payments=order.payments + (payment,), amount_paid=order.amount_paid + event.amount,
                           status=status)
        case m.OrderPartiallyPaid():
            return replace(order, status=OrderStatus.PARTIAL_PAID)
        case m.OrderPaid() | m.OrderResolved():
            return replace(order, status=OrderStatus.PAID)
        case m.OrderCanceled():
            note = {"cancel_note": event.note} if event.note else {}
            metadata = {**order.metadata, "canceled_reason": event.reason, **note}
            return replace(order, status=OrderStatus.CANCELED, metadata=metadata)
        case m.OrderReopened():
            metadata = {k: v for k, v in order.metadata.items() if k not in ("canceled_reason", "cancel_note")}
            return replace(order, status=OrderStatus.PENDING, metadata=metadata)
    raise TypeError(f"unhandled event {type(event).__name__}")


def _set_session(order: Order, session_id: str, status: SessionStatus) -> Order:
    sessions = tuple(replace(s, status=status) if s.session_id == session_id else s for s in order.sessions)
    return replace(order, sessions=sessions)


def replay(events: list[m.Event]) -> Order | None:
    order: Order | None = None
    for event in events:
        order = evolve(order, event)
    return order


def run(order: Order | None, cmd: m.Command) -> tuple[Order | None, list[m.Event]]:
    """decide then evolve: the new state and the events that produced it."""
    events = decide(order, cmd)
    for event in events:
        order = evolve(order, event)
    return order, events
