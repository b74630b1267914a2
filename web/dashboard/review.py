"""Review queues: pending refunds, renewal requests and refund-request tokens by state, with their actions."""

from __future__ import annotations

from datetime import datetime

import msgspec
from aiohttp import web

from accounts.roles import Can
from actors.statuses import TokenStatus
from actors.views import stored_view
from web.api import audit_trail, bodies
from web.api.answers import refund_json, token_json
from web.api.handlers import refund_requests
from web.dashboard import app_keys, details
from web.dashboard.guard import done, signed_in
from web.dashboard.html import render
from web.edge import dashboard_site, decoding
from web.edge.app_state import caller, ctx
from web.edge.forms import form

SHOWN = 100  # newest first; a queue longer than this is worked from the top


async def _pending_refunds(request: web.Request) -> list[dict]:
    api_key, settings = caller(request), ctx(request).settings
    rows = await ctx(request).pool.fetch(
        "SELECT o.state, o.state_schema, r.refund_id FROM refunds r JOIN orders o USING (order_id)"
        " WHERE r.merchant_id = $1 AND r.livemode = $2 AND r.status = 'PENDING' ORDER BY r.created_at DESC LIMIT $3",
        api_key.merchant_id, api_key.livemode, SHOWN)
    found = []
    for row in rows:
        order = stored_view(row["state"], row["state_schema"])
        refund = refund_json(settings, order, order.refund(row["refund_id"]))
        found.append({**msgspec.to_builtins(refund), "order_number": order.order_number})
    return found


def _token_filter(status: str, now: datetime) -> tuple[str, object]:
    """The read table says ACTIVE until the scheduler's sweep; the clock says expired already (status_at)."""
    if status == "ACTIVE":
        return "t.status = 'ACTIVE' AND t.expires_at > $3", now
    if status == "EXPIRED_UNUSED":
        return "(t.status = 'EXPIRED_UNUSED' OR (t.status = 'ACTIVE' AND t.expires_at <= $3))", now
    return "t.status = $3", status


async def _tokens(request: web.Request, status: str) -> list[dict]:
    api_key, c = caller(request), ctx(request)
    now = c.clock()
    where, value = _token_filter(status, now)
    rows = await c.pool.fetch(
        "SELECT o.state, o.state_schema, t.token FROM refund_tokens t JOIN orders o USING (order_id)"
        f" WHERE t.merchant_id = $1 AND t.livemode = $2 AND {where} ORDER BY t.created_at DESC LIMIT $4",
        api_key.merchant_id, api_key.livemode, value, SHOWN)
    found = []
    for row in rows:
        order = stored_view(row["state"], row["state_schema"])
        token = token_json(c.settings, order, order.token(row["token"]), now)
        found.append({**msgspec.to_builtins(token), "order_number": order.order_number})
    return found


@signed_in(Can.REFUND)
async def queues(request: web.Request) -> web.Response:
    status = request.query.get("tokens", "ACTIVE")
    if status not in TokenStatus.__members__:
        status = "ACTIVE"
    return render(request, "review.html", pending=await _pending_refunds(request),
                  renewals=await _tokens(request, "RENEWAL_REQUESTED"), token_status=status,
                  tokens=await _tokens(request, status), token_statuses=list(TokenStatus.__members__), details=details)


def _back(request: web.Request) -> str:
    return f"{request.app[app_keys.PREFIX]}/{request.match_info['mode']}/review"


@signed_in(Can.REFUND)
@audit_trail.records("refund.canceled")
async def cancel_token(request: web.Request) -> web.Response:
    note = decoding.convert({"reason": (await form(request)).get("reason")}, bodies.TokenCancelIn).reason
    token = await refund_requests.cancel(request, note)
    raise await done(request, _back(request) + "?tokens=CANCELED", f"Refund link {token.token} canceled.")


@signed_in(Can.REFUND)
@audit_trail.records("refund_link.created")
async def approve_renewal(request: web.Request) -> web.Response:
    """The new link replaces the old one; the buyer's page never shows it, so the merchant is shown it to send."""
    renewed = await refund_requests.renew(request, None, dashboard_site.TOKEN_TTL_S)
    raise await done(request, f"{request.app[app_keys.PREFIX]}/{request.match_info['mode']}/refund-requests/"
                              f"{renewed.token}", "Renewal approved: send the customer this new link.")
