"""Properties of the whole order core: any sequence of commands, applied through decide and evolve, keeps every
invariant after every step, moves statuses only along the spec's tables, and rebuilds from its events.

The `ci` hypothesis profile (the default) keeps the run under a minute; HYPOTHESIS_PROFILE=long explores more.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors import messages as m
from actors.errors import Refused
from actors.order import decide, evolve, replay
from actors.state import Order, OrderStatus, RefundStatus, TokenStatus
from common import order_limits
from tests.unit.test_order_machine import BASE, T0

settings.register_profile("ci", max_examples=400, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=5000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

S = OrderStatus
# docs/spec.md §3.3, with the decisions of docs/api.md: (from, to) for every move a status may make.
ORDER_MOVES = {
    (S.PENDING, S.PAID), (S.PENDING, S.PARTIAL_PAID), (S.PARTIAL_PAID, S.PAID), (S.PENDING, S.CANCELED),
    (S.PARTIAL_PAID, S.CANCELED), (S.CANCELED, S.PENDING), (S.PAID, S.PARTIALLY_REFUNDED), (S.PAID, S.REFUNDED),
    (S.PARTIAL_PAID, S.PARTIALLY_REFUNDED), (S.PARTIAL_PAID, S.REFUNDED), (S.PARTIALLY_REFUNDED, S.REFUNDED),
    (S.CANCELED, S.PARTIALLY_REFUNDED), (S.CANCELED, S.REFUNDED),
    (S.REFUNDED, S.PARTIALLY_REFUNDED),  # money reaching a fully refunded order (docs/api.md)
}
R = RefundStatus
REFUND_MOVES = {(None, R.PENDING), (None, R.APPROVED), (R.PENDING, R.APPROVED), (R.PENDING, R.REJECTED),
                (R.APPROVED, R.EXECUTED), (R.APPROVED, R.REJECTED)}
K = TokenStatus
TOKEN_MOVES = {(None, K.ACTIVE), (K.ACTIVE, K.SUBMITTED), (K.ACTIVE, K.EXPIRED_UNUSED), (K.ACTIVE, K.CANCELED),
               (K.EXPIRED_UNUSED, K.RENEWAL_REQUESTED), (K.RENEWAL_REQUESTED, K.RENEWED)}
OWED = 10_000_000
DEST = m.Destination("0xdest", "ethereum", "0xtoken")

small = st.integers(1, 4)
money = st.sampled_from([1, 2_500_000, 5_000_000, OWED - 1, OWED, OWED + 1, 3 * OWED])
pays = st.tuples(st.just("pay"), small, money)
action = st.one_of(
    st.tuples(st.just("open_session"), small), st.tuples(st.just("pay"), small, money),
    st.tuples(st.just("expire_session"), small), st.tuples(st.just("cancel")), st.tuples(st.just("reopen"), small),
    st.tuples(st.just("resolve")),
    st.tuples(st.just("refund"), small, money, st.sampled_from(["merchant", "customer"]), st.booleans()),
    st.tuples(st.just("approve"), small), st.tuples(st.just("reject"), small), st.tuples(st.just("cancel_refund"), small),
    st.tuples(st.just("submit_tx"), small), st.tuples(st.just("fail_tx"), small), st.tuples(st.just("execute"), small),
    st.tuples(st.just("mint"), small, st.one_of(st.none(), money)), st.tuples(st.just("submit_token"), small, money),
    st.tuples(st.just("expire_token"), small), st.tuples(st.just("cancel_token"), small),
    st.tuples(st.just("request_renewal"), small), st.tuples(st.just("approve_renewal"), small),
)


def _session(n: int, at) -> m.NewSession:
    return m.NewSession(session_id=f"cs_{n}", session_key=f"cs_test_{n}", expires_at=at + timedelta(seconds=60))


def _pick(items: tuple, n: int):
    """The n-th of the objects made so far (actions name earlier refunds, tokens and sessions by number)."""
    return items[(n - 1) % len(items)] if items else None


def command(order: Order, step: int, act: tuple) -> m.Command:
    at = T0 + timedelta(seconds=90 * step)  # past every session's and token's 60 s, so expiries can happen
    kind, *args = act
    common = dict(BASE, at=at)
    refund = _pick(order.refunds, args[0]) if args else None
    refund_of = dict(common, refund_id=refund.refund_id if refund else "re_none")
    token = _pick(order.tokens, args[0]) if args else None
    token_of = dict(common, token=token.token if token else "rfqt_none")
    attempt = refund.attempts[-1] if refund and refund.attempts else None
    tx = dict(network="ethereum", tx_hash=attempt.tx_hash if attempt else f"0xr{step}", token_address="0xtoken")
    match kind:
        case "open_session":
            return m.OpenSession(**common, session=_session(step, at))
        case "pay":
            return m.ConfirmPayment(**common, payment_id=f"pay_{step}", network="ethereum", tx_hash=f"0x{step}",
                                    token_address="0xtoken", amount=args[1])
        case "expire_session":
            session = _pick(order.sessions, args[0])
            return m.ExpireSession(**common, session_id=session.session_id if session else "cs_none")
        case "cancel":
            return m.CancelOrder(**common)
        case "reopen":
            return m.ReopenOrder(**common, session=_session(step, at))
        case "resolve":
            return m.ResolveOrder(**common)
        case "refund":
            _, amount, flow, auto = args
            return m.CreateRefund(**common, refund_id=f"re_{step}", link_token=f"rl_{step}", amount=amount, reason="",
                                  destination=DEST, flow=flow, auto_approve=auto)
        case "approve":
            return m.ApproveRefund(**refund_of)
        case "reject":
            return m.RejectRefund(**refund_of)
        case "cancel_refund":
            return m.CancelRefund(**refund_of)
        case "submit_tx":
            return m.SubmitRefundTx(**refund_of, network="ethereum", tx_hash=f"0xr{step}", token_address="0xtoken")
        case "fail_tx":
            return m.FailRefundTx(**refund_of, network="ethereum", tx_hash=tx["tx_hash"], reason="mismatch")
        case "execute":
            return m.ConfirmRefundTransfer(**refund_of, **tx)
        case "mint":
            return m.MintRefundToken(**common, token=f"rfqt_{step}", ref_type="order_id", ref_value="ord_1",
                                     amount=args[1], expires_at=at + timedelta(seconds=60), source="b2b")
        case "submit_token":
            return m.CreateRefund(**common, refund_id=f"re_{step}", link_token=f"rl_{step}", amount=args[1], reason="",
                                  destination=DEST, flow="customer", token=token_of["token"])
        case "expire_token":
            return m.ExpireRefundToken(**token_of)
        case "cancel_token":
            return m.CancelRefundToken(**token_of)
        case "request_renewal":
            return m.RequestTokenRenewal(**token_of)
        case "approve_renewal":
            return m.ApproveTokenRenewal(**token_of, new_token=f"rfqt_{step}", expires_at=at + timedelta(seconds=60))
    raise AssertionError(kind)


def _check(before: Order, after: Order, at, events: list[m.Event], history: list[m.Event]) -> None:
    assert after.version == len(history)
    assert replay(history) == after
    assert after.amount_paid >= 0 and after.amount_refunded >= 0 and after.refundable >= 0
    executed = sum(r.amount for r in after.refunds if r.status is R.EXECUTED)
    held = sum(r.amount for r in after.refunds if r.status is not R.REJECTED)
    assert after.amount_refunded == executed and held <= after.amount_paid
    assert 0 < after.amount_owed <= order_limits.MAX_AMOUNT
    for t in after.tokens:
        assert 0 < t.amount
    if before.status is not after.status:
        assert (before.status, after.status) in ORDER_MOVES, (before.status, after.status, events)
    was = {r.refund_id: r.status for r in before.refunds}
    for r in after.refunds:
        if was.get(r.refund_id) is not r.status:
            assert (was.get(r.refund_id), r.status) in REFUND_MOVES
    # Tokens as a reader sees them at that instant: an ACTIVE token past its expiry is EXPIRED_UNUSED already.
    had = {t.token: t.status_at(at) for t in before.tokens}
    for t in after.tokens:
        if had.get(t.token) is not t.status_at(at):
            assert (had.get(t.token), t.status_at(at)) in TOKEN_MOVES
    if after.status is S.REFUNDED:
        assert after.amount_refunded == after.amount_paid
    if after.status is S.PAID and not any(isinstance(e, m.OrderResolved) for e in history):
        assert after.amount_paid >= after.amount_owed  # only accept-and-resolve settles for less


# Most sequences start paid and keep paying now and then, so refunds and tokens have money to take.
@given(st.lists(pays, max_size=2), st.lists(st.one_of(pays, action, action), max_size=40))
def test_every_sequence_keeps_the_invariants(first_payments, actions):
    first = m.CreateOrder(**BASE, at=T0, order_number=1001, amount=OWED, session=_session(0, T0))
    history = decide(None, first)
    order = replay(history)
    for step, act in enumerate(first_payments + actions, start=1):
        cmd = command(order, step, act)
        try:
            events = decide(order, cmd)
        except Refused:
            continue
        after = order
        for event in events:
            after = evolve(after, event)
        history += events
        _check(order, after, cmd.at, events, history)
        order = after
