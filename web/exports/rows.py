"""One export row per object, mapped from the order's read view (pure: no I/O, no clock)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from functools import lru_cache

import msgspec

from actors.rules import CARD
from actors.statuses import RefundStatus
from actors.views import OrderView, PaymentView, RefundView
from common import money
from common.clock import iso
from contract.exports import OrderExportRow, PaymentExportRow, RefundExportRow
from web.reads import networks

CARD_PROVIDER = "stripe"  # the one card provider merchants connect today (cards/providers.py)
_APPROVED = {RefundStatus.APPROVED, RefundStatus.EXECUTED}


def in_range(moment: datetime, start: datetime | None, end: datetime | None) -> bool:
    """`start` inclusive, `end` exclusive; an absent bound is open."""
    return (start is None or moment >= start) and (end is None or moment < end)


@lru_cache(maxsize=256)
def _asset(network: str, token_address: str) -> str:
    return "USD" if network == CARD else networks.symbol(network, token_address)


def order_row(o: OrderView, paid_at: datetime | None) -> OrderExportRow:
    return OrderExportRow(
        order_id=o.order_id, order_number=str(o.order_number), livemode=o.livemode, status=o.status.value,
        currency="USD", amount_owed=money.format(o.amount_owed), amount_paid=money.format(o.amount_paid),
        amount_refunded=money.format(o.amount_refunded), external_ref=o.external_ref,
        metadata=msgspec.json.encode(dict(o.metadata)).decode(), created_at=iso(o.created_at),
        paid_at=iso(paid_at) if paid_at else None, updated_at=iso(o.updated_at))


def _payment_row(o: OrderView, p: PaymentView) -> PaymentExportRow:
    card = p.network == CARD
    return PaymentExportRow(
        payment_id=p.payment_id, order_id=o.order_id, order_number=str(o.order_number), livemode=o.livemode,
        rail="card" if card else "chain", network=p.network, provider=CARD_PROVIDER if card else None,
        transaction=p.tx_hash, amount=money.format(p.amount), currency="USD", asset=_asset(p.network, p.token_address),
        token_address=None if card else p.token_address, late=p.late, confirmed_at=iso(p.received_at))


def payment_rows(o: OrderView, start: datetime | None, end: datetime | None) -> Iterator[PaymentExportRow]:
    """The order's payments confirmed within the range, in the order they came."""
    return (_payment_row(o, p) for p in o.payments if in_range(p.received_at, start, end))


def _approved_by(r: RefundView) -> str | None:
    if r.source == "merchant":
        return "merchant"
    return "review" if r.status in _APPROVED else None


def refund_row(o: OrderView, r: RefundView) -> RefundExportRow:
    card = r.refund_network == CARD
    return RefundExportRow(
        refund_id=r.refund_id, order_id=o.order_id, order_number=str(o.order_number), livemode=o.livemode,
        rail="card" if card else "chain", status=r.status.value, amount=money.format(r.amount), currency="USD",
        reason=r.reason, note=r.note, destination=None if card else r.refund_to_address, network=r.refund_network,
        token_address=None if card else r.refund_token_address, transaction=r.executed_tx_hash, source=r.source,
        approved_by=_approved_by(r), created_at=iso(r.created_at), updated_at=iso(r.updated_at))
