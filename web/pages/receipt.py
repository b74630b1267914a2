"""The buyer's receipt `/receipts/{receipt_key}` on the checkout origin: a paid order's merchant, number, amounts,
how it was paid and its refunds, printable, in the checkout's locales, and nothing of the merchant's own records
(no order id, metadata or external_ref) nor any buyer's address."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from aiohttp import web

from accounts.receipt_keys import order_id_of
from actors.rules import CARD
from actors.statuses import RefundStatus
from actors.views import OrderView, PaymentView, stored_view
from chain_watchers import UnknownNetwork
from common import money
from common.network_names import network_name
from web import i18n
from web.api.receipts import PAID
from web.edge.app_state import ctx
from web.pages import params as page_params
from web.pages.checkout import error_page
from web.pages.templating import render
from web.reads import networks

_TABLES = i18n.load(Path(i18n.__file__).parent / "receipt")
_REFUND_TABLES = i18n.load(Path(i18n.__file__).parent / "refund")  # the refund statuses' words
# Search engines leave receipts out even when a buyer posts the link somewhere.
NOINDEX = {"X-Robots-Tag": "noindex, nofollow"}


def translator(params: page_params.PageParams) -> i18n.Translator:
    return i18n.Translator(params.locale).including(_TABLES).including(_REFUND_TABLES)


def _explorer(network: str, tx_hash: str) -> str | None:
    try:
        return networks.registry().network(network).explorer_url(tx_hash)
    except UnknownNetwork:
        return None


def _time(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


def _payment(p: PaymentView) -> dict:
    if p.network == CARD:
        return {"card": True, "brand": p.card_brand, "last4": p.card_last4, "amount": money.format(p.amount),
                "at": _time(p.received_at)}
    return {"card": False, "network": network_name(p.network), "tx_hash": p.tx_hash,
            "explorer": _explorer(p.network, p.tx_hash), "amount": money.format(p.amount), "at": _time(p.received_at)}


def receipt_of(order: OrderView) -> dict:
    """The receipt's facts: what a buyer holding the link may see."""
    refunds = [{"amount": money.format(r.amount), "status": r.status.value, "at": _time(r.updated_at),
                "tx_hash": r.executed_tx_hash,
                "explorer": _explorer(r.executed_network, r.executed_tx_hash) if r.executed_tx_hash else None}
               for r in order.refunds if r.status is not RefundStatus.REJECTED]
    return {
        "order_number": order.order_number,
        "livemode": order.livemode,
        "items": [{"name": i.name, "quantity": i.quantity, "amount": money.format(i.unit_amount * i.quantity)}
                  for i in order.line_items],
        "total": money.format(order.amount_owed),
        "paid": money.format(order.amount_paid),
        "refunded": money.format(order.amount_refunded) if order.amount_refunded else None,
        "paid_at": _time(max((p.received_at for p in order.payments), default=order.updated_at)),
        "payments": [_payment(p) for p in order.payments],
        "refunds": refunds,
    }


async def page(request: web.Request) -> web.Response:
    params = page_params.read(request)
    t = translator(params)
    order_id = order_id_of(ctx(request).derived.receipts, request.match_info["receipt_key"])
    row = None if order_id is None else await ctx(request).pool.fetchrow(
        "SELECT o.state, o.state_schema, m.name FROM orders o JOIN merchants m USING (merchant_id)"
        " WHERE o.order_id = $1", order_id)
    if row is None:
        answer = error_page(t, params, 404, "receipt_not_found", "No such receipt.")
    else:
        order = stored_view(row["state"], row["state_schema"])
        if order.status not in PAID:
            answer = render("receipt.html", t, {"sdkMode": None}, code=404, merchant_name=row["name"], receipt=None)
        else:
            answer = render("receipt.html", t, {"sdkMode": None}, merchant_name=row["name"], receipt=receipt_of(order))
    answer.headers.update(NOINDEX)
    return answer
