"""The public form of events: order_id always, never external_ref, the refund's or token's fields."""

from __future__ import annotations

import msgspec
import pytest

from actors import messages as m
from actors.order import decide, run
from actors.publication import publish, transition
from tests.unit.test_order_machine import BASE, build, create, later, pay
from tests.unit.test_refund_machine import mint, refund

SECRET_REF = "merchant-internal-ref-42"


def _created():
    return m.CreateOrder(**{**BASE}, at=later(0), order_number=1001, amount=10_000_000, external_ref=SECRET_REF,
                         session=create().session)


CASES = [
    ("order.created", (), _created()),
    ("payment.settled", (_created(),), pay(10_000_000)),
    ("payment.refund.approved", (_created(), pay(10_000_000)), refund()),
    ("refund_request.created", (_created(), pay(10_000_000)), mint()),
    ("refund_request.canceled", (_created(), pay(10_000_000), mint()),
     m.CancelRefundToken(**BASE, at=later(3), token="rfqt_1", reason="dup")),
]


@pytest.mark.parametrize("wanted,setup,trigger", CASES, ids=[c[0] for c in CASES])
def test_public_event(wanted, setup, trigger):
    order, events = run(build(*setup), trigger)
    event = next(e for e in events if e.__struct_config__.tag == wanted)
    public = publish("evt_1", 1, event, order, order.status)
    data = msgspec.json.decode(msgspec.json.encode(public))["data"]  # as the stream and the webhooks carry it
    assert public.type == wanted and data["order_id"] == "ord_1"
    assert SECRET_REF not in repr(public) and "external_ref" not in data
    if wanted.startswith("payment.refund"):
        assert (data["refund_id"], data["amount"], data["refund_status"]) == ("re_1", "4.00", "APPROVED")
        assert data["refund_to_address"] == "0xdest"
    if wanted.startswith("refund_request"):
        assert data["token"] == "rfqt_1" and data["amount"] == "5.00"
    if wanted == "refund_request.canceled":
        assert data["reason"] == "dup" and data["refund_request_status"] == "CANCELED"
    if wanted == "refund_request.created":
        assert data["source"] == "b2b"


@pytest.mark.parametrize("setup,trigger,statuses", [
    ((_created(),), pay(10_000_000), {"payment.received": "PAID", "checkout_session.completed": "PAID",
                                      "payment.settled": "PAID"}),
    ((_created(),), pay(4_000_000), {"payment.received": "PARTIAL_PAID", "order.partially_paid": "PARTIAL_PAID"}),
    ((_created(),), m.CancelOrder(**BASE, at=later(5)), {"checkout_session.expired": "CANCELED",
                                                          "order.canceled": "CANCELED"}),
], ids=["full", "partial", "cancel"])
def test_every_event_of_a_transition_says_the_status_the_order_has_after_it(setup, trigger, statuses):
    """docs/webhooks.md: order_status is the order's status right after the event's transition, so a merchant acting
    on a payment.received that paid the order in full reads PAID, not the PENDING between two events nobody sees."""
    before, _ = run(None, setup[0])
    published = {event.__struct_config__.tag: status.value
                 for event, _after, status in transition(before, decide(before, trigger))}
    assert published == statuses
