"""docs/spec.md §3.3 on the pure Order machine: one case per stated move, and the refusals around them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from actors import messages as m
from actors.errors import Refused
from actors.order import OrderStatus, SessionStatus, decide, replay, run

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
OWED = 10_000_000  # 10.00 USD
BASE = dict(order_id="ord_1", merchant_id="mer_1", livemode=False)


def session(n: int, ttl: int = 1800, opened: datetime = T0) -> m.NewSession:
    return m.NewSession(session_id=f"cs_{n}", session_key=f"cs_test_key{n}",
                        expires_at=opened + timedelta(seconds=ttl))


def create(at=T0) -> m.CreateOrder:
    return m.CreateOrder(**BASE, at=at, order_number=1001, amount=OWED, session=session(1))


def pay(amount: int, tx: str = "0xa", at=T0) -> m.ConfirmPayment:
    return m.ConfirmPayment(**BASE, at=at, payment_id=f"pay_{tx}", network="ethereum", tx_hash=tx,
                            token_address="0xtoken", amount=amount)


def later(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def build(*commands: m.Command):
    order = None
    for cmd in commands:
        order, _ = run(order, cmd)
    return order


PENDING = (create(),)
REFUNDED = (create(), pay(OWED),
            m.CreateRefund(**BASE, at=later(10), refund_id="re_1", link_token="rl_1", amount=OWED, reason="",
                           destination=m.Destination("0xdest", "ethereum", "0xtoken"), flow="merchant"),
            m.ConfirmRefundTransfer(**BASE, at=later(20), refund_id="re_1", network="ethereum", tx_hash="0xr",
                                    token_address="0xtoken"))
PARTIAL = (create(), pay(4_000_000))
TIMED_OUT = (create(), m.ExpireSession(**BASE, at=later(1800), session_id="cs_1"))

# (name, setup commands, trigger, expected status, expected event types, canceled_reason)
STATED_MOVES = [
    ("pending-full-settles-paid", PENDING, pay(OWED),
     OrderStatus.PAID, ["payment.received", "checkout_session.completed", "payment.settled"], None),
    ("pending-less-than-total-partial", PENDING, pay(4_000_000),
     OrderStatus.PARTIAL_PAID, ["payment.received", "order.partially_paid"], None),
    ("partial-accept-and-resolve-paid", PARTIAL, m.ResolveOrder(**BASE, at=later(10)),
     OrderStatus.PAID, ["checkout_session.expired", "order.resolved"], None),
    ("partial-residual-session-settles-paid",
     PARTIAL + (m.OpenSession(**BASE, at=later(5), session=session(2), amount_due=6_000_000),),
     pay(6_000_000, "0xb", later(6)),
     OrderStatus.PAID, ["payment.received", "checkout_session.completed", "payment.settled"], None),
    ("pending-ttl-expires-canceled", PENDING, m.ExpireSession(**BASE, at=later(1800), session_id="cs_1"),
     OrderStatus.CANCELED, ["checkout_session.expired", "order.canceled"], "payment_timeout"),
    ("unpaid-cancel-call-canceled", PENDING, m.CancelOrder(**BASE, at=later(1)),
     OrderStatus.CANCELED, ["checkout_session.expired", "order.canceled"], "merchant_canceled"),
    ("refunded-paid-again-partially-refunded", REFUNDED, pay(2_000_000, "0xc", later(30)),
     OrderStatus.PARTIALLY_REFUNDED, ["payment.received"], None),
    ("timeout-canceled-reopen-pending", TIMED_OUT, m.ReopenOrder(**BASE, at=later(2000), session=session(2, opened=later(2000))),
     OrderStatus.PENDING, ["order.reopened", "checkout_session.created"], None),
]


@pytest.mark.parametrize("setup,trigger,status,types,reason", [r[1:] for r in STATED_MOVES],
                         ids=[r[0] for r in STATED_MOVES])
def test_stated_move(setup, trigger, status, types, reason):
    before = build(*setup)
    after, events = run(before, trigger)
    assert after.status is status
    assert [e.__struct_config__.tag for e in events] == types
    assert after.metadata.get("canceled_reason") == reason
    assert replay(_history(setup, trigger)) == after


def _history(setup, trigger):
    order, history = None, []
    for cmd in setup + (trigger,):
        order, events = run(order, cmd)
        history += events
    return history


# (name, setup, trigger, status code, error code)
REFUSALS = [
    ("cancel-paid", PENDING + (pay(OWED),), m.CancelOrder(**BASE, at=later(1)), 409, "order_not_cancelable"),
    ("cancel-canceled", TIMED_OUT, m.CancelOrder(**BASE, at=later(1900)), 409, "order_not_cancelable"),
    ("reopen-merchant-canceled", PENDING + (m.CancelOrder(**BASE, at=later(1)),),
     m.ReopenOrder(**BASE, at=later(2), session=session(2)), 409, "order_not_reopenable"),
    ("reopen-pending", PENDING, m.ReopenOrder(**BASE, at=later(2), session=session(2)), 409, "order_not_reopenable"),
    ("resolve-pending", PENDING, m.ResolveOrder(**BASE, at=later(2)), 409, "order_not_resolvable"),
    ("session-on-paid", PENDING + (pay(OWED),), m.OpenSession(**BASE, at=later(2), session=session(2)),
     409, "order_not_payable"),
    ("session-amount-due-not-residual", PARTIAL,
     m.OpenSession(**BASE, at=later(2), session=session(2), amount_due=1), 422, "amount_due_mismatch"),
    ("other-merchant", PENDING,
     m.CancelOrder(order_id="ord_1", merchant_id="mer_2", livemode=False, at=later(1)), 404, "order_not_found"),
    ("other-mode", PENDING,
     m.CancelOrder(order_id="ord_1", merchant_id="mer_1", livemode=True, at=later(1)), 404, "order_not_found"),
    ("unknown-order", (), m.CancelOrder(**BASE, at=later(1)), 404, "order_not_found"),
    ("create-twice", PENDING, create(), 409, "order_exists"),
]


@pytest.mark.parametrize("setup,trigger,status,code", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_refusal(setup, trigger, status, code):
    with pytest.raises(Refused) as refused:
        decide(build(*setup), trigger)
    assert (refused.value.failure.status, refused.value.failure.code) == (status, code)


def test_same_transfer_reported_twice_counts_once():
    order = build(create(), pay(4_000_000, "0xa"))
    assert decide(order, pay(4_000_000, "0xa")) == []
    assert order.amount_paid == 4_000_000


def test_expiry_before_due_or_after_payment_changes_nothing():
    assert decide(build(*PENDING), m.ExpireSession(**BASE, at=later(10), session_id="cs_1")) == []
    paid = build(create(), pay(OWED))
    assert decide(paid, m.ExpireSession(**BASE, at=later(1800), session_id="cs_1")) == []


def test_partial_paid_session_expiry_keeps_the_money_and_status():
    order, events = run(build(*PARTIAL), m.ExpireSession(**BASE, at=later(1800), session_id="cs_1"))
    assert order.status is OrderStatus.PARTIAL_PAID and order.amount_paid == 4_000_000
    assert [e.__struct_config__.tag for e in events] == ["checkout_session.expired"]


def test_payment_after_cancel_is_recorded_as_late():
    order, events = run(build(*TIMED_OUT), pay(OWED))
    assert order.status is OrderStatus.CANCELED
    assert order.payments[-1].late and order.amount_paid == OWED


def test_new_session_supersedes_the_live_one():
    order = build(create(), m.OpenSession(**BASE, at=later(1), session=session(2)))
    assert [s.status for s in order.sessions] == [SessionStatus.SUPERSEDED, SessionStatus.OPEN]
    assert order.sessions[-1].amount_due == OWED
