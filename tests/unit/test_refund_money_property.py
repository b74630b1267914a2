"""Property: whatever sequence of refund commands arrives, refunded plus outstanding never exceeds paid."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from actors import messages as m
from actors.errors import Refused
from actors.order import run
from actors.state import RefundStatus
from tests.unit.test_order_machine import BASE, build, create, later, pay

DEST = m.Destination("0xdest", "ethereum", "0xtoken")

step = st.one_of(
    st.tuples(st.just("create"), st.integers(1, 6), st.integers(1, 12_000_000), st.sampled_from(["merchant", "customer"])),
    st.tuples(st.just("approve"), st.integers(1, 6)),
    st.tuples(st.just("reject"), st.integers(1, 6)),
    st.tuples(st.just("cancel"), st.integers(1, 6)),
    st.tuples(st.just("execute"), st.integers(1, 6)),
    st.tuples(st.just("pay"), st.integers(1, 6_000_000)),
)


def command(n: int, action: tuple) -> m.Command:
    at = later(n + 1)
    kind, *args = action
    if kind == "create":
        rid, amount, flow = args
        return m.CreateRefund(**BASE, at=at, refund_id=f"re_{rid}", link_token=f"rl_{rid}", amount=amount,
                              reason="", destination=DEST, flow=flow)
    if kind == "pay":
        return m.ConfirmPayment(**BASE, at=at, payment_id=f"pay_{n}", network="ethereum", tx_hash=f"0x{n}",
                                token_address="0xtoken", amount=args[0])
    rid = f"re_{args[0]}"
    if kind == "execute":
        return m.ConfirmRefundTransfer(**BASE, at=at, refund_id=rid, network="ethereum", tx_hash=f"0xr{n}",
                                       token_address="0xtoken")
    return {"approve": m.ApproveRefund, "reject": m.RejectRefund, "cancel": m.CancelRefund}[kind](
        **BASE, at=at, refund_id=rid)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10_000_000), st.lists(step, max_size=40))
def test_refunds_never_exceed_paid(first_payment, actions):
    order = build(create(), pay(first_payment))
    for n, action in enumerate(actions):
        try:
            order, _ = run(order, command(n, action))
        except Refused:
            continue
        executed = sum(r.amount for r in order.refunds if r.status is RefundStatus.EXECUTED)
        outstanding = sum(r.amount for r in order.refunds if r.status in (RefundStatus.PENDING, RefundStatus.APPROVED))
        assert order.amount_refunded == executed
        assert executed + outstanding <= order.amount_paid
        assert order.refundable == order.amount_paid - executed - outstanding
