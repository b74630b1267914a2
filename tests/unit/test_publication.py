"""The public form of events: order_id always, never external_ref, the refund's or token's fields."""

from __future__ import annotations

import msgspec
import pytest

from actors import messages as m
from actors.order import run
from actors.publication import publish
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
    public = publish("evt_1", 1, event, order)
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
