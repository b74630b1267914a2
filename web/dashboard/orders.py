"""The orders list (status filter, search, cursor pages) and the order page with everything that happened to it."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import msgspec
from aiohttp import web

from accounts import audit
from accounts.roles import Can
from actors import schema
from actors.rules import CARD
from actors.statuses import OrderStatus
from common import money
from web.api.answers import order_answer, refund_json, token_json
from web.api.handlers.orders import ORDER_LIST
from web.dashboard import details
from web.dashboard.guard import signed_in
from web.dashboard.html import problem, render
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.pages import qr
from web.reads import order_filters, owned
from web.reads.pagination import Page


async def _search(request: web.Request, q: str | None) -> tuple[int | None, str | None]:
    """(order number, text): digits may be an order number or an external_ref; a buyer's checkout link (its QR,
    scanned at the counter) or session key stands for its order; anything else is a ref or an id."""
    if not q:
        return None, None
    checkout = _CHECKOUT.search(q)
    if checkout:
        try:
            return None, await owned.order_id_of(request, "session_key", checkout.group(1))
        except ApiError:
            return None, q  # another merchant's or mode's session: found nothing, like any unknown text
    return (int(q) if q.isdigit() and len(q) < 18 else None), q


_CHECKOUT = re.compile(r"(?:^|/c/)(cs_(?:test|live)_[0-9A-Za-z_-]+)(?:[?#].*)?$")


@signed_in(Can.SEE_ORDERS)
async def orders_list(request: web.Request) -> web.Response:
    page = Page(request, (*order_filters.NAMES, "q"))
    filters = order_filters.parse(request.query)
    number, text = await _search(request, (page.filters["q"] or "").strip()[:255])
    found, rows = await owned.orders(request, filters, page.before, page.limit + 1, (number, text))
    listed = page.answer(ORDER_LIST, [order_answer(request, o) for o in found], rows,
                         lambda r: (r["created_at"], r["order_id"]))
    return render(request, "orders.html", orders=listed.data, next_cursor=listed.next_cursor,
                  status=filters.status or "", q=page.filters["q"] or "", statuses=list(OrderStatus.__members__),
                  dates={name: page.filters[name] or "" for name in order_filters.NAMES[1:]},
                  filter_query=urlencode({name: page.filters[name] for name in order_filters.NAMES if page.filters[name]}),
                  paged="cursor" in request.query)


async def _timeline(request: web.Request, order_id: str) -> list[dict]:
    rows = await ctx(request).pool.fetch(
        "SELECT type, data, schema, created_at FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    return [{"type": r["type"], "at": r["created_at"],
             "details": details.event_details(msgspec.to_builtins(schema.event(r["data"], r["schema"])))}
            for r in rows]


async def order_page(request: web.Request, order_id: str, *, code: int = 200, values: dict | None = None,
                     error: ApiError | None = None, token: str | None = None) -> web.Response:
    """The order page. With `values` the Issue Refund dialog opens on its form (and `error` beside the field it
    names); with `token` it opens on that minted link, its copy button and its QR code."""
    order = await owned.order(request, order_id)
    settings, now = ctx(request).settings, ctx(request).clock()
    tokens = msgspec.to_builtins([token_json(settings, order, t, now) for t in order.tokens])
    minted = next((t for t in tokens if t["token"] == token), None)
    first = order.payments[0] if order.payments else None
    return render(
        request, "order.html", code=code, order=msgspec.to_builtins(order_answer(request, order)),
        refunds=msgspec.to_builtins([refund_json(settings, order, r) for r in order.refunds]), tokens=tokens,
        timeline=await _timeline(request, order.order_id), details=details,
        actions=await audit.of_order(ctx(request).pool, order.merchant_id, order.order_id),
        refundable=order.refundable, refundable_text=money.format(order.refundable),
        destinations=details.destination_options(order.livemode, any(p.network == CARD for p in order.payments)),
        dialog="link" if minted else ("form" if values is not None else None),
        values={"action": "execute", "destination": f"{first.network}|{first.token_address}" if first else "",
                **(values or {})},
        error=problem(error),
        minted=minted, minted_qr=qr.svg(minted["refund_url"], "QR code of the refund link") if minted else None,
    )


@signed_in(Can.SEE_ORDERS)
async def order(request: web.Request) -> web.Response:
    return await order_page(request, request.match_info["order_id"])
