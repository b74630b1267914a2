"""The Issue Refund dialog: execute now (an APPROVED refund, then its execution screen) or send the customer a link."""

from __future__ import annotations

from aiohttp import web

from accounts.roles import Can
from actors.rules import CARD
from web.api import audit_trail, bodies
from web.api.handlers import refund_requests, refunds
from web.dashboard import app_keys
from web.dashboard.guard import done, signed_in
from web.dashboard.orders import order_page
from web.edge import dashboard_site, decoding
from web.edge.app_state import caller
from web.edge.errors import ApiError
from web.edge.forms import form
from web.reads import owned


def _base(request: web.Request) -> str:
    return f"{request.app[app_keys.PREFIX]}/{request.match_info['mode']}"


@signed_in(Can.REFUND)
async def dialog(request: web.Request) -> web.Response:
    """The dialog as a page of its own, for a browser without scripts (with scripts it opens in place)."""
    return await order_page(request, request.match_info["order_id"], values={})


def _link_body(order_id: str, posted: dict) -> bodies.RefundRequestIn:
    metadata = {"reason": posted["reason"]} if posted.get("reason") else None
    return decoding.convert({"ref_type": "order_id", "ref_value": order_id, "amount": posted.get("amount", ""),
                             "metadata": metadata}, bodies.RefundRequestIn)


def _refund_body(order_id: str, posted: dict) -> bodies.RefundIn:
    network, _, token_address = posted.get("destination", "").partition("|")
    return decoding.convert({"order_id": order_id, "amount": posted.get("amount", ""), "reason": posted.get("reason", ""),
                             "refund_to_address": posted.get("refund_to_address", ""), "refund_network": network,
                             "refund_token_address": token_address}, bodies.RefundIn)


@signed_in(Can.REFUND)
@audit_trail.records("refund.issued", "refund_link.created")
async def issue(request: web.Request) -> web.Response:
    order_id, merchant_id = request.match_info["order_id"], caller(request).merchant_id
    posted = await form(request)
    try:
        if posted.get("action") == "link":
            minted = await refund_requests.issue_token(request, merchant_id, _link_body(order_id, posted),
                                                       "dashboard", dashboard_site.TOKEN_TTL_S)
            raise web.HTTPSeeOther(f"{_base(request)}/refund-requests/{minted.token}")
        refund = await refunds.create(request, merchant_id, _refund_body(order_id, posted), "merchant")
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return await order_page(request, order_id, code=exc.status, values=posted, error=exc)
    next_step = ("the service sends it to your card provider." if refund.refund_network == CARD
                 else "send the transfer, then paste its transaction hash here.")
    raise await done(request, f"{_base(request)}/refunds/{refund.refund_id}", f"Refund created and approved: {next_step}")


@signed_in(Can.REFUND)
async def minted_link(request: web.Request) -> web.Response:
    """A refund-request token's link, copy button and QR code, in the dialog over its order's page."""
    token = request.match_info["token"]
    order_id = await owned.order_id_of(request, "refund_request", token, "token")
    return await order_page(request, order_id, token=token)
