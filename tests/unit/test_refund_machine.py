"""docs/spec.md §3.1 and §3.2 on the pure machine: one case per row, with exactly the events each emits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from msgspec.structs import replace

from actors import messages as m
from actors.errors import Refused
from actors.order import decide, run
from actors.state import RefundStatus, TokenStatus
from tests.unit.test_order_machine import BASE, T0, build, create, later, pay

DEST = m.Destination("0xdest", "ethereum", "0xtoken")
PAID = (create(), pay(10_000_000))


def refund(n: int = 1, amount: int = 4_000_000, flow: str = "merchant", auto: bool = False, token=None, at=T0):
    return m.CreateRefund(**BASE, at=at, refund_id=f"re_{n}", link_token=f"rl_{n}", amount=amount, reason="r",
                          destination=DEST, flow=flow, auto_approve=auto, token=token)


def mint(token: str = "rfqt_1", amount: int | None = 5_000_000, ttl: int = 1800, at=T0):
    return m.MintRefundToken(**BASE, at=at, token=token, ref_type="order_id", ref_value="ord_1", amount=amount,
                             expires_at=at + timedelta(seconds=ttl), source="b2b")


def tags(events):
    return [e.__struct_config__.tag for e in events]


PENDING_REFUND = PAID + (refund(flow="customer"),)
APPROVED_REFUND = PAID + (refund(),)

# The card rail: paid through the merchant's provider, refunded by the service through it (docs/spec.md §2.3: the
# provider routes the money, so the destination is empty).
CARD_DEST = m.Destination("", "card", "")
CARD_PAID = (create(), m.ConfirmPayment(**BASE, at=T0, payment_id="pay_card", network="card", tx_hash="pi_1",
                                        token_address="", amount=10_000_000))


def card_refund(n: int = 1, amount: int = 4_000_000, flow: str = "merchant"):
    return replace(refund(n, amount, flow), destination=CARD_DEST)


T1 = later(1)


def provider(status: str, provider_refund_id: str = "re_stripe1", attempt: int = 0, at=T1):
    return m.RecordCardRefund(**BASE, at=at, refund_id="re_1", provider_refund_id=provider_refund_id, status=status,
                              attempt=attempt, reason="declined" if status == "failed" else None)


APPROVED_CARD_REFUND = CARD_PAID + (card_refund(),)
PENDING_AT_PROVIDER = APPROVED_CARD_REFUND + (provider("pending"),)
REFUSED_BY_PROVIDER = APPROVED_CARD_REFUND + (provider("failed", ""),)

# (name, setup, trigger, refund status after, order status after, events)
REFUND_ROWS = [
    ("none-merchant-initiated-approved", PAID, refund(), RefundStatus.APPROVED, "PAID",
     ["payment.refund.requested", "payment.refund.approved"]),
    ("none-customer-flow-pending", PAID, refund(flow="customer"), RefundStatus.PENDING, "PAID",
     ["payment.refund.requested"]),
    ("none-buyer-form-auto-approved", PAID + (mint(),), refund(flow="customer", auto=True, token="rfqt_1"),
     RefundStatus.APPROVED, "PAID",
     ["payment.refund.requested", "payment.refund.approved", "refund_request.submitted"]),
    ("pending-approve-approved", PENDING_REFUND, m.ApproveRefund(**BASE, at=later(1), refund_id="re_1"),
     RefundStatus.APPROVED, "PAID", ["payment.refund.approved"]),
    ("pending-reject-rejected", PENDING_REFUND, m.RejectRefund(**BASE, at=later(1), refund_id="re_1", reason="no"),
     RefundStatus.REJECTED, "PAID", ["payment.refund.rejected"]),
    ("approved-confirmed-executed", APPROVED_REFUND,
     m.ConfirmRefundTransfer(**BASE, at=later(1), refund_id="re_1", network="ethereum", tx_hash="0xr",
                             token_address="0xtoken"),
     RefundStatus.EXECUTED, "PARTIALLY_REFUNDED", ["payment.refund.executed"]),
    ("approved-canceled-rejected", APPROVED_REFUND, m.CancelRefund(**BASE, at=later(1), refund_id="re_1"),
     RefundStatus.REJECTED, "PAID", ["payment.refund.canceled"]),
    ("card-none-merchant-initiated-approved", CARD_PAID, card_refund(), RefundStatus.APPROVED, "PAID",
     ["payment.refund.requested", "payment.refund.approved"]),
    ("card-none-customer-flow-pending", CARD_PAID, card_refund(flow="customer"), RefundStatus.PENDING, "PAID",
     ["payment.refund.requested"]),
    ("card-approved-provider-succeeded-executed", APPROVED_CARD_REFUND, provider("succeeded"),
     RefundStatus.EXECUTED, "PARTIALLY_REFUNDED", ["payment.refund.tx_submitted", "payment.refund.executed"]),
    ("card-approved-provider-pending-approved", APPROVED_CARD_REFUND, provider("pending"), RefundStatus.APPROVED,
     "PAID", ["payment.refund.tx_submitted"]),
    ("card-pending-at-provider-succeeded-executed", PENDING_AT_PROVIDER, provider("succeeded", at=later(2)),
     RefundStatus.EXECUTED, "PARTIALLY_REFUNDED", ["payment.refund.executed"]),
    ("card-pending-at-provider-failed-approved", PENDING_AT_PROVIDER, provider("failed", at=later(2)),
     RefundStatus.APPROVED, "PAID", ["payment.refund.tx_failed"]),
    ("card-approved-provider-refused-approved", APPROVED_CARD_REFUND, provider("failed", ""), RefundStatus.APPROVED,
     "PAID", ["payment.refund.tx_submitted", "payment.refund.tx_failed"]),
    ("card-refused-retried-approved", REFUSED_BY_PROVIDER, m.RetryRefund(**BASE, at=later(2), refund_id="re_1"),
     RefundStatus.APPROVED, "PAID", ["payment.refund.retried"]),
    ("card-retried-provider-succeeded-executed",
     REFUSED_BY_PROVIDER + (m.RetryRefund(**BASE, at=later(2), refund_id="re_1"),),
     provider("succeeded", "re_stripe2", attempt=1, at=later(3)), RefundStatus.EXECUTED, "PARTIALLY_REFUNDED",
     ["payment.refund.tx_submitted", "payment.refund.executed"]),
    ("card-full-refund-executed-refunded", CARD_PAID + (card_refund(amount=10_000_000),), provider("succeeded"),
     RefundStatus.EXECUTED, "REFUNDED", ["payment.refund.tx_submitted", "payment.refund.executed"]),
]


@pytest.mark.parametrize("setup,trigger,status,order_status,types", [r[1:] for r in REFUND_ROWS],
                         ids=[r[0] for r in REFUND_ROWS])
def test_refund_row(setup, trigger, status, order_status, types):
    order, events = run(build(*setup), trigger)
    assert tags(events) == types
    assert order.refund("re_1").status is status
    assert order.status.value == order_status


FINAL = {
    "rejected": PENDING_REFUND + (m.RejectRefund(**BASE, at=later(1), refund_id="re_1"),),
    "executed": APPROVED_REFUND + (m.ConfirmRefundTransfer(**BASE, at=later(1), refund_id="re_1", network="ethereum",
                                                           tx_hash="0xr", token_address="0xtoken"),),
}
MOVES = {
    "approve": m.ApproveRefund(**BASE, at=later(2), refund_id="re_1"),
    "reject": m.RejectRefund(**BASE, at=later(2), refund_id="re_1"),
    "cancel": m.CancelRefund(**BASE, at=later(2), refund_id="re_1"),
    "execute-other-tx": m.ConfirmRefundTransfer(**BASE, at=later(2), refund_id="re_1", network="ethereum",
                                                tx_hash="0xother", token_address="0xtoken"),
}


@pytest.mark.parametrize("final", list(FINAL))
@pytest.mark.parametrize("move", list(MOVES))
def test_final_refund_states(final, move):
    with pytest.raises(Refused) as refused:
        decide(build(*FINAL[final]), MOVES[move])
    assert refused.value.failure.code == "refund_state_conflict"


def test_same_execution_reported_twice_is_one():
    order = build(*FINAL["executed"])
    assert decide(order, m.ConfirmRefundTransfer(**BASE, at=later(3), refund_id="re_1", network="ethereum",
                                                 tx_hash="0xr", token_address="0xtoken")) == []


def test_refund_refusals():
    with pytest.raises(Refused, match="no payment"):
        decide(build(create()), refund())
    with pytest.raises(Refused, match="above the refundable"):
        decide(build(*PAID, refund(1, 6_000_000)), refund(2, 4_000_001))


# docs/spec.md §3.2: (name, setup, trigger, token status after, events)
EXPIRED = PAID + (mint(ttl=60), m.ExpireRefundToken(**BASE, at=later(60), token="rfqt_1"))
RENEWAL = EXPIRED + (m.RequestTokenRenewal(**BASE, at=later(70), token="rfqt_1", customer_note="lost it"),)
TOKEN_ROWS = [
    ("none-mint-active", PAID, mint(), TokenStatus.ACTIVE, ["refund_request.created"]),
    ("active-submit-submitted", PAID + (mint(),), refund(flow="customer", token="rfqt_1", at=later(10)),
     TokenStatus.SUBMITTED, ["payment.refund.requested", "refund_request.submitted"]),
    ("active-time-passes-expired", PAID + (mint(ttl=60),), m.ExpireRefundToken(**BASE, at=later(60), token="rfqt_1"),
     TokenStatus.EXPIRED_UNUSED, ["refund_request.expired"]),
    ("active-merchant-cancels-canceled", PAID + (mint(),),
     m.CancelRefundToken(**BASE, at=later(5), token="rfqt_1", reason="duplicate"), TokenStatus.CANCELED,
     ["refund_request.canceled"]),
    ("expired-buyer-asks-renewal-requested", EXPIRED,
     m.RequestTokenRenewal(**BASE, at=later(70), token="rfqt_1", customer_note="lost it"),
     TokenStatus.RENEWAL_REQUESTED, ["refund_request.renewal_requested"]),
    ("renewal-requested-merchant-approves-renewed", RENEWAL,
     m.ApproveTokenRenewal(**BASE, at=later(80), token="rfqt_1", new_token="rfqt_2", expires_at=later(2000)),
     TokenStatus.RENEWED, ["refund_request.renewed", "refund_request.created"]),
]


@pytest.mark.parametrize("setup,trigger,status,types", [r[1:] for r in TOKEN_ROWS], ids=[r[0] for r in TOKEN_ROWS])
def test_token_row(setup, trigger, status, types):
    order, events = run(build(*setup), trigger)
    assert tags(events) == types
    assert order.token("rfqt_1").status is status


def test_renewal_issues_a_new_active_token_with_the_same_terms():
    order, events = run(build(*RENEWAL), m.ApproveTokenRenewal(**BASE, at=later(80), token="rfqt_1",
                                                              new_token="rfqt_2", expires_at=later(2000)))
    renewed, created = events
    assert (renewed.old_token, renewed.new_token) == ("rfqt_1", "rfqt_2")
    assert created.source == "renewal"
    new = order.token("rfqt_2")
    assert new.status is TokenStatus.ACTIVE and new.amount == 5_000_000
    assert order.token("rfqt_1").customer_note == "lost it"


def test_only_the_first_cancel_emits():
    order = build(*PAID, mint(), m.CancelRefundToken(**BASE, at=later(5), token="rfqt_1"))
    assert decide(order, m.CancelRefundToken(**BASE, at=later(6), token="rfqt_1")) == []


def test_expired_token_read_before_the_sweep():
    order = build(*PAID, mint(ttl=60))
    assert order.token("rfqt_1").status_at(later(59)) is TokenStatus.ACTIVE
    assert order.token("rfqt_1").status_at(later(60)) is TokenStatus.EXPIRED_UNUSED
    with pytest.raises(Refused, match="EXPIRED_UNUSED"):
        decide(order, refund(flow="customer", token="rfqt_1", at=later(61)))
    _, events = run(order, m.RequestTokenRenewal(**BASE, at=later(61), token="rfqt_1"))
    assert tags(events) == ["refund_request.expired", "refund_request.renewal_requested"]


@pytest.mark.parametrize("final,setup", [
    ("submitted", PAID + (mint(), refund(flow="customer", token="rfqt_1", at=later(1)))),
    ("canceled", PAID + (mint(), m.CancelRefundToken(**BASE, at=later(1), token="rfqt_1"))),
    ("renewed", RENEWAL + (m.ApproveTokenRenewal(**BASE, at=later(80), token="rfqt_1", new_token="rfqt_2",
                                                 expires_at=later(2000)),)),
])
def test_final_token_states_accept_no_submission_or_renewal(final, setup):
    order = build(*setup)
    for move in (refund(2, 1_000_000, flow="customer", token="rfqt_1", at=later(90)),
                 m.RequestTokenRenewal(**BASE, at=later(90), token="rfqt_1")):
        with pytest.raises(Refused):
            decide(order, move)


def test_submission_above_ceiling_refused():
    with pytest.raises(Refused) as refused:
        decide(build(*PAID, mint(amount=2_000_000)), refund(amount=2_000_001, flow="customer", token="rfqt_1"))
    assert (refused.value.failure.status, refused.value.failure.code) == (422, "amount_exceeds_ceiling")


def test_legacy_mint_ceiling_is_the_refundable_balance():
    order, events = run(build(*PAID, refund(1, 3_000_000)), mint(amount=None))
    assert events[0].amount == 7_000_000


# Card rail rules that refuse or change nothing: one case each.
CARD_NO_OPS = [
    ("same-report-twice", APPROVED_CARD_REFUND + (provider("succeeded"),), provider("succeeded", at=later(2))),
    ("pending-reported-again", PENDING_AT_PROVIDER, provider("pending", at=later(2))),
    ("late-report-of-a-settled-attempt", REFUSED_BY_PROVIDER + (m.RetryRefund(**BASE, at=later(2), refund_id="re_1"),),
     provider("failed", "", attempt=0, at=later(3))),
]


@pytest.mark.parametrize("setup,trigger", [r[1:] for r in CARD_NO_OPS], ids=[r[0] for r in CARD_NO_OPS])
def test_card_report_that_changes_nothing(setup, trigger):
    assert decide(build(*setup), trigger) == []


CARD_REFUSALS = [
    ("cancel-approved-card-refund", APPROVED_CARD_REFUND, m.CancelRefund(**BASE, at=later(1), refund_id="re_1"),
     409, "refund_sent_to_provider"),
    ("retry-not-refused", APPROVED_CARD_REFUND, m.RetryRefund(**BASE, at=later(1), refund_id="re_1"), 409,
     "refund_not_refused"),
    ("retry-while-pending", PENDING_AT_PROVIDER, m.RetryRefund(**BASE, at=later(2), refund_id="re_1"), 409,
     "refund_not_refused"),
    ("retry-chain-refund", APPROVED_REFUND, m.RetryRefund(**BASE, at=later(1), refund_id="re_1"), 422,
     "not_a_card_refund"),
    ("provider-report-on-chain-refund", APPROVED_REFUND, provider("succeeded"), 422, "not_a_card_refund"),
    ("card-refund-above-card-paid", PAID + (pay(5_000_000, "0xb"), m.ConfirmPayment(
        **BASE, at=T0, payment_id="pay_card", network="card", tx_hash="pi_1", token_address="", amount=3_000_000)),
     card_refund(amount=3_000_001), 409, "amount_exceeds_card_paid"),
]


@pytest.mark.parametrize("setup,trigger,status,code", [r[1:] for r in CARD_REFUSALS],
                         ids=[r[0] for r in CARD_REFUSALS])
def test_card_refusal(setup, trigger, status, code):
    with pytest.raises(Refused) as refused:
        decide(build(*setup), trigger)
    assert (refused.value.failure.status, refused.value.failure.code) == (status, code)
