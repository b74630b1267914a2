"""The order core refuses any command that breaks a bound (actors/invariants.py), one case a row."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import msgspec
import pytest

from actors import messages as m
from actors.errors import Refused
from actors.order import decide, run
from common import order_limits

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
BASE = dict(order_id="ord_a1", merchant_id="mer_a1", livemode=False, at=T0)
SESSION = m.NewSession(session_id="cs_a1", session_key="cs_test_a1", expires_at=T0 + timedelta(seconds=1800))
ITEMS = (m.LineItem("tea", 2, 3_000_000), m.LineItem("cake", 1, 4_000_000))
CREATE = m.CreateOrder(**BASE, order_number=1001, amount=10_000_000, line_items=ITEMS, session=SESSION)
PAY = m.ConfirmPayment(**BASE, payment_id="pay_a1", network="ethereum", tx_hash="0xa", token_address="0xt",
                       amount=10_000_000)
DEST = m.Destination("0xabc", "ethereum", "0xt")
REFUND = m.CreateRefund(**BASE, refund_id="re_a1", link_token="rl_a1", amount=1_000_000, reason="", destination=DEST,
                        flow="merchant")
MINT = m.MintRefundToken(**BASE, token="rfqt_a1", ref_type="order_id", ref_value="ord_a1", amount=1_000_000,
                         expires_at=T0 + timedelta(minutes=30), source="b2b")
r = msgspec.structs.replace
NAIVE = datetime(2026, 1, 1)

# (name, command, the state's commands before it, param)
CASES = [
    ("negative-amount", r(CREATE, amount=-5_000_000, line_items=()), [], "amount"),
    ("zero-amount", r(CREATE, amount=0, line_items=()), [], "amount"),
    ("huge-amount", r(CREATE, amount=order_limits.MAX_AMOUNT + 1, line_items=()), [], "amount"),
    ("amount-not-the-items-sum", r(CREATE, amount=9_000_000), [], "amount"),
    ("item-quantity-zero", r(CREATE, line_items=(m.LineItem("tea", 0, 3_000_000),), amount=0), [], "amount"),
    ("item-quantity-negative", r(CREATE, line_items=(m.LineItem("tea", -1, 3_000_000),), amount=3_000_000), [],
     "line_items[0].quantity"),
    ("item-price-negative", r(CREATE, line_items=(m.LineItem("tea", 1, -3),), amount=3), [], "line_items[0].unit_amount"),
    ("item-name-empty", r(CREATE, line_items=(m.LineItem("", 1, 3),), amount=3), [], "line_items[0].name"),
    ("naive-time", r(CREATE, at=NAIVE), [], "at"),
    ("year-9999", r(CREATE, at=datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)), [], "at"),
    ("year-1", r(CREATE, at=datetime(1, 1, 1, tzinfo=timezone.utc)), [], "at"),
    ("non-utc-offset", r(CREATE, at=T0.astimezone(timezone(timedelta(hours=2)))), [], "at"),
    ("session-naive-expiry", r(CREATE, session=r(SESSION, expires_at=NAIVE)), [], "session.expires_at"),
    ("session-expires-before-creation", r(CREATE, session=r(SESSION, expires_at=T0 - timedelta(seconds=1))), [],
     "session.expires_at"),
    ("session-lives-past-7-days", r(CREATE, session=r(SESSION, expires_at=T0 + timedelta(days=8))), [],
     "session.expires_at"),
    ("session-key-of-other-mode", r(CREATE, session=r(SESSION, session_key="cs_live_a1")), [], "session.session_key"),
    ("malformed-order-id", r(CREATE, order_id="../ord_x"), [], "order_id"),
    ("order-id-without-prefix", r(CREATE, order_id="order-1"), [], "order_id"),
    ("order-id-with-nul", r(CREATE, order_id="ord_a\x00"), [], "order_id"),
    ("malformed-merchant-id", r(CREATE, merchant_id=""), [], "merchant_id"),
    ("malformed-session-id", r(CREATE, session=r(SESSION, session_id="session")), [], "session_id"),
    ("negative-order-number", r(CREATE, order_number=-1), [], "order_number"),
    ("metadata-key-empty", r(CREATE, metadata={"": "x"}), [], "metadata"),
    ("payment-negative", r(PAY, amount=-1), [CREATE], "amount"),
    ("payment-id-malformed", r(PAY, payment_id="x"), [CREATE], "payment_id"),
    ("refund-zero", r(REFUND, amount=0), [CREATE, PAY], "amount"),
    ("refund-unknown-flow", r(REFUND, flow="other"), [CREATE, PAY], "flow"),
    ("refund-id-malformed", r(REFUND, refund_id="re/1"), [CREATE, PAY], "refund_id"),
    ("token-naive-expiry", r(MINT, expires_at=NAIVE), [CREATE, PAY], "expires_at"),
    ("token-unknown-ref-type", r(MINT, ref_type="email"), [CREATE, PAY], "ref_type"),
    ("token-amount-negative", r(MINT, amount=-1), [CREATE, PAY], "amount"),
    ("token-malformed", r(MINT, token="rfq_1"), [CREATE, PAY], "token"),
]


def _state(commands):
    order = None
    for cmd in commands:
        order, _ = run(order, cmd)
    return order


@pytest.mark.parametrize("command,before,param", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_command_breaking_a_bound_is_refused(command, before, param):
    with pytest.raises(Refused) as refused:
        decide(_state(before), command)
    failure = refused.value.failure
    assert (failure.status, failure.code, failure.param) == (422, "invariant_violated", param)


@pytest.mark.parametrize("command,before", [(CREATE, []), (PAY, [CREATE]), (REFUND, [CREATE, PAY]),
                                            (MINT, [CREATE, PAY])])
def test_the_commands_the_api_sends_are_decided(command, before):
    assert decide(_state(before), command)


def test_a_refund_never_exceeds_what_was_paid_less_what_was_refunded():
    state = _state([CREATE, PAY, r(REFUND, amount=6_000_000)])
    with pytest.raises(Refused) as refused:
        decide(state, r(REFUND, refund_id="re_a2", link_token="rl_a2", amount=4_000_001))
    assert refused.value.failure.status == 409
    assert decide(state, r(REFUND, refund_id="re_a2", link_token="rl_a2", amount=4_000_000))
