"""The receipt mail's text, from the order's view: the receipt's address when the order has one, and the amounts
alone for an order made before receipts had addresses (never a "None" link)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from actors import state as s
from actors.statuses import OrderStatus
from actors.views import view_of
from notify.receipt_mailer import compose

AT = datetime(2026, 11, 27, tzinfo=timezone.utc)
URL = "https://pay.example/receipts/rcpt_1"


def _paid(receipt_url: str | None) -> s.Order:
    return s.Order(order_id="ord_1", merchant_id="mer_1", livemode=True, order_number=1001, amount_owed=5_000_000,
                   created_at=AT, updated_at=AT, status=OrderStatus.PAID, amount_paid=5_000_000,
                   receipt_url=receipt_url)


@pytest.mark.parametrize("kind,opening", [("payment", "You paid 5.00 USD to Shop for order #1001."),
                                          ("refund", "Shop refunded 0.00 USD of order #1001.")])
def test_the_mail_links_the_receipt_the_order_holds(kind, opening):
    mail = compose(kind, view_of(_paid(URL)), "Shop", "buyer@example.com")
    assert mail.text == f"{opening}\n\nYour receipt: {URL}\n"
    assert f'<a href="{URL}">View your receipt</a>' in mail.html


def test_an_order_without_a_receipt_address_is_mailed_its_amounts_alone():
    mail = compose("payment", view_of(_paid(None)), "Shop", "buyer@example.com")
    assert mail.text == "You paid 5.00 USD to Shop for order #1001.\n"
    assert "None" not in mail.html and "<a" not in mail.html
