"""Receipts as the web shows them: only a paid order (PAID, PARTIALLY_REFUNDED, REFUNDED) has one to show; its
address is common/receipt_keys.py's."""

from __future__ import annotations

from actors.statuses import OrderStatus
from actors.views import OrderView
from common.config import Settings
from common.receipt_keys import receipt_url

PAID = frozenset({OrderStatus.PAID, OrderStatus.PARTIALLY_REFUNDED, OrderStatus.REFUNDED})


def paid_receipt_url(settings: Settings, key: bytes, order: OrderView) -> str | None:
    """What the API answers as `receipt_url`: the address once the order has been paid, null before."""
    return receipt_url(settings, key, order.order_id) if order.status in PAID else None
