"""Reads of the caller's own objects from the read tables; another merchant's or mode's answer 404."""

from __future__ import annotations

import msgspec
from aiohttp import web

from actors.state import Order
from web.context import caller, ctx
from web.errors import ApiError

_decode_order = msgspec.json.Decoder(Order).decode
# Which read table maps each kind of id to its order, and what a miss is called.
_INDEX = {
    "refund": ("refunds", "refund_id", "refund"),
    "refund_request": ("refund_tokens", "token", "refund_request"),
    "session_id": ("checkout_sessions", "session_id", "session"),
    "session_key": ("checkout_sessions", "session_key", "session"),
}


def missing(what: str, param: str | None = None) -> ApiError:
    return ApiError(404, f"{what}_not_found", f"No such {what.replace('_', ' ')}.", param or f"{what}_id")


async def order(request: web.Request, order_id: str) -> Order:
    api_key = caller(request)
    state = await ctx(request).pool.fetchval(
        "SELECT state FROM orders WHERE order_id = $1 AND merchant_id = $2 AND livemode = $3",
        order_id, api_key.merchant_id, api_key.livemode,
    )
    if state is None:
        raise missing("order")
    return _decode_order(state)


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
