"""Reads of the caller's own objects from the read tables; another merchant's or mode's answer 404."""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from actors.views import OrderView, stored_view
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads import order_filters
from web.reads.order_filters import OrderFilter

# Which read table maps each kind of id to its order, and what a miss is called.
_INDEX = {
    "refund": ("refunds", "refund_id", "refund"),
    "refund_request": ("refund_tokens", "token", "refund_request"),
    "session_id": ("checkout_sessions", "session_id", "session"),
    "session_key": ("checkout_sessions", "session_key", "session"),
}


def missing(what: str, param: str | None = None) -> ApiError:
    return ApiError(404, f"{what}_not_found", f"No such {what.replace('_', ' ')}.", param or f"{what}_id")


async def order(request: web.Request, order_id: str) -> OrderView:
    api_key = caller(request)
    row = await ctx(request).pool.fetchrow(
        "SELECT state, state_schema FROM orders WHERE order_id = $1 AND merchant_id = $2 AND livemode = $3",
        order_id, api_key.merchant_id, api_key.livemode,
    )
    if row is None:
        raise missing("order")
    return stored_view(row["state"], row["state_schema"])


# The caller's orders, newest first, for the API's list and the dashboard's: filtered by status, creation and paid
# time (web/reads/order_filters.py), and by a search that matches an order number, an external_ref or an id.
_ORDERS = (
    "SELECT state, state_schema, created_at, order_id FROM orders WHERE merchant_id = $1 AND livemode = $2"
    " AND ($3::text IS NULL OR order_number = $4 OR external_ref = $3 OR order_id = $3)"
    " AND ($5::timestamptz IS NULL OR (created_at, order_id) < ($5, $6))"
    f"{order_filters.where(8)}"
    " ORDER BY created_at DESC, order_id DESC LIMIT $7"
)


async def orders(request: web.Request, filters: OrderFilter, before: tuple[datetime, str] | None, limit: int,
                 search: tuple[int | None, str | None] = (None, None)) -> tuple[list[OrderView], list]:
    """Up to `limit` orders and their rows (for the page cursor)."""
    api_key = caller(request)
    after_at, after_id = before or (None, "")
    number, text = search
    rows = await ctx(request).pool.fetch(_ORDERS, api_key.merchant_id, api_key.livemode, text, number,
                                         after_at, after_id, limit, *filters)
    return [stored_view(r["state"], r["state_schema"]) for r in rows], rows


async def order_id_of(request: web.Request, kind: str, value: str, param: str | None = None) -> str:
    table, column, what = _INDEX[kind]
    api_key = caller(request)
    order_id = await ctx(request).pool.fetchval(
        f"SELECT order_id FROM {table} WHERE {column} = $1 AND merchant_id = $2 AND livemode = $3",
        value, api_key.merchant_id, api_key.livemode,
    )
    if order_id is None:
        raise missing(what, param)
    return order_id


async def order_id_by_number(request: web.Request, number: str, param: str) -> str:
    api_key = caller(request)
    order_id = None
    if number.isdigit() and len(number) < 18:
        order_id = await ctx(request).pool.fetchval(
            "SELECT order_id FROM orders WHERE order_number = $1 AND merchant_id = $2 AND livemode = $3",
            int(number), api_key.merchant_id, api_key.livemode,
        )
    if order_id is None:
        raise missing("order", param)
    return order_id
