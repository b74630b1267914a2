"""The merchant app's point of sale: a sale is a quick checkout session made by the API's own code, its live status
(the checkout page's), and the signed-in user's sales of the day with their totals."""

from __future__ import annotations

from datetime import datetime, timedelta

from aiohttp import web

from accounts.roles import Can, allows
from actors.views import stored_view
from common import money
from common.clock import iso
from common.network_names import network_name
from web.api import audit_trail, bodies
from web.api.answers import checkout_url, respond
from web.api.handlers import orders
from web.dashboard import app_keys
from web.dashboard.guard import signed_in
from web.edge import decoding
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.pages import qr, session
from web.pages.checkout import required_confirmations
from web.pages.quotes import accepted
from web.pages.status import status_json
from web.reads import networks, owned

DAY_LIMIT = timedelta(hours=36)  # "today" begins at the device's midnight: at most a day and a half ago


def _no_store(data: dict, status: int = 200) -> web.Response:
    answer = respond(data, status)
    answer.headers["Cache-Control"] = "no-store"  # money figures: never kept by a cache, nor shown stale
    return answer


async def _sale(request: web.Request, order_id: str) -> dict:
    """What the counter shows of a sale: the buyer's checkout link and QR, the networks, and the live state."""
    order = await owned.order(request, order_id)
    staff = request[app_keys.STAFF]
    if not allows(staff.role, Can.SEE_ORDERS):
        seller = await ctx(request).pool.fetchval("SELECT user_id FROM counter_sales WHERE order_id = $1", order_id)
        if seller != staff.user_id:  # a cashier's own sales only, and the same answer as an unknown order
            raise owned.missing("order")
    if not order.sessions:  # an order made by the API without a checkout: nothing to show a buyer
        raise owned.missing("order")
    key = order.sessions[-1].session_key
    found = await session.load(ctx(request).pool, key)
    url = checkout_url(ctx(request).settings, key)
    status = status_json(found.order, found.session, found.attempts, ctx(request).clock(), required_confirmations,
                         order.receipt_url)
    return {
        "order_id": order.order_id, "order_number": str(order.order_number), "amount": money.format(order.amount_owed),
        "external_ref": order.external_ref, "checkout_url": url, "qr": qr.data_uri(url),
        "networks": [network_name(net.slug) for net, _ in
                     accepted(networks.registry(), order.livemode, found.receive_addresses)],
        "status": status,
        # After a paid sale the buyer scans this to keep the receipt (or the counter prints it).
        "receipt_qr": qr.data_uri(status["receipt_url"]) if status["receipt_url"] else None,
    }


@signed_in(Can.SELL, json=True)
@audit_trail.records("sale.created")
async def sell(request: web.Request) -> web.Response:
    sale = decoding.decode(await request.read(), bodies.SaleIn)
    order = await orders.create(request, bodies.QuickSessionIn(amount=sale.amount, external_ref=sale.external_ref),
                                with_session=True)
    api_key = caller(request)
    await ctx(request).pool.execute(
        "INSERT INTO counter_sales (order_id, user_id, merchant_id, livemode, created_at) VALUES ($1, $2, $3, $4, $5)"
        " ON CONFLICT (order_id) DO NOTHING",
        order.order_id, request[app_keys.STAFF].user_id, api_key.merchant_id, api_key.livemode, order.created_at)
    await audit_trail.record(request, "sale.created", object_id=order.order_id, order_id=order.order_id,
                             details={"amount": money.format(order.amount_owed)})
    return _no_store(await _sale(request, order.order_id), 201)


@signed_in(Can.SELL, json=True)
async def sale(request: web.Request) -> web.Response:
    return _no_store(await _sale(request, request.match_info["order_id"]))


def _since(request: web.Request) -> datetime:
    now = ctx(request).clock()
    try:
        since = datetime.fromisoformat(request.query.get("since", ""))
    except ValueError:
        since = None
    if since is None or since.tzinfo is None or not now - DAY_LIMIT <= since <= now:
        raise ApiError(422, "invalid_since", "`since` must be a time with its offset within the last 36 hours.",
                       "since")
    return since


@signed_in(Can.SELL, json=True)
async def todays_sales(request: web.Request) -> web.Response:
    """The signed-in user's own sales since the device's midnight, newest first; paid money totalled."""
    api_key = caller(request)
    rows = await ctx(request).pool.fetch(
        "SELECT o.state, o.state_schema FROM counter_sales c JOIN orders o USING (order_id)"
        " WHERE c.user_id = $1 AND c.livemode = $2 AND c.created_at >= $3 ORDER BY c.created_at DESC",
        request[app_keys.STAFF].user_id, api_key.livemode, _since(request))
    sold = [stored_view(row["state"], row["state_schema"]) for row in rows]
    return _no_store({
        "sales": [{"order_id": o.order_id, "order_number": str(o.order_number), "at": iso(o.created_at),
                   "amount": money.format(o.amount_owed), "paid": money.format(o.amount_paid),
                   "status": o.status.value, "external_ref": o.external_ref,
                   "expired": o.metadata.get("canceled_reason") == "payment_timeout"} for o in sold],
        "count": len(sold),
        "paid": money.format(sum(o.amount_paid for o in sold)),
        "paid_count": sum(1 for o in sold if o.amount_paid >= o.amount_owed),
    })
