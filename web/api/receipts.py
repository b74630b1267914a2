"""Receipts as the web shows them: the address the order was made with (accounts/receipt_keys.py), and only for a
paid order (PAID, PARTIALLY_REFUNDED, REFUNDED)."""

from __future__ import annotations

from urllib.parse import urlsplit

from actors.statuses import OrderStatus
from actors.views import OrderView

PAID = frozenset({OrderStatus.PAID, OrderStatus.PARTIALLY_REFUNDED, OrderStatus.REFUNDED})


def paid_receipt_url(order: OrderView) -> str | None:
    """What the API answers as `receipt_url`: the address once the order has been paid, null before."""
    return order.receipt_url if order.status in PAID else None


def receipt_path(order: OrderView) -> str | None:
    """The receipt's address on the checkout origin, as the pages served there link to it."""
    return urlsplit(order.receipt_url).path if order.receipt_url else None
