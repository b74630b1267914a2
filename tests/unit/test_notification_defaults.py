"""What a new user's bell tells without any choice made (docs/dashboard.md, Notifications), and that a notice names
its network as people know it."""

from __future__ import annotations

import pytest

from notify import kinds
from notify.kinds import Kind

# (role, kind, told by default): money in and money back out are on for those who run the shop.
DEFAULTS = [
    ("owner", Kind.PAYMENT_RECEIVED, True),
    ("owner", Kind.REFUND_EXECUTED, True),
    ("owner", Kind.REFUND_REQUESTED, True),
    ("owner", Kind.WEBHOOK_FAILING, True),
    ("manager", Kind.PAYMENT_RECEIVED, True),
    ("manager", Kind.REFUND_EXECUTED, True),
    ("manager", Kind.WEBHOOK_FAILING, False),  # not theirs to fix: settings are the owner's
    ("cashier", Kind.REFUND_EXECUTED, False),  # a cashier cannot act on refunds
]


@pytest.mark.parametrize("role, kind, told", DEFAULTS)
def test_default_choice(role, kind, told):
    assert kinds.wanted(role, kind, None) is told


@pytest.mark.parametrize("role, kind", [("owner", Kind.PAYMENT_RECEIVED), ("manager", Kind.REFUND_EXECUTED)])
def test_a_choice_made_wins_over_the_default(role, kind):
    assert kinds.wanted(role, kind, False) is False


FACTS = {"order_id": "ord_1", "order_number": "1001", "amount": "12.50", "network": "sepolia",
         "refund_id": "re_1", "refund_network": "base-sepolia"}


@pytest.mark.parametrize("event_type, says", [
    ("payment.received", "12.50 USD arrived for order #1001 on Ethereum Sepolia."),
    ("payment.refund.executed", "The refund of 12.50 USD for order #1001 was executed on Base Sepolia."),
])
def test_a_notice_names_the_network_by_its_display_name(event_type, says):
    notice = kinds.from_event("evt_1", event_type, "mer_1", False, FACTS)
    assert notice.body == says
