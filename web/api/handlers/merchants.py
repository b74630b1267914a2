"""The calling merchant's own record."""

from __future__ import annotations

from aiohttp import web

from accounts import merchants
from contract import api as contract
from web.api.answers import respond
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError


def own_merchant_id(request: web.Request) -> str:
    """The path's merchant, which must be the caller's: another merchant's key is a 403."""
    merchant_id = request.match_info["merchant_id"]
    if merchant_id != caller(request).merchant_id:
        raise ApiError(403, "merchant_mismatch", "This API key does not belong to that merchant.", "merchant_id")
    return merchant_id


async def get_merchant(request: web.Request) -> web.Response:
    merchant = await merchants.get(ctx(request).pool, own_merchant_id(request))
    if merchant is None:
        raise ApiError(404, "merchant_not_found", "No such merchant.", "merchant_id")
    return respond(contract.Merchant(merchant_id=merchant.merchant_id, name=merchant.name,
                                     livemode=caller(request).livemode))
