"""Refund-request tokens (docs/spec.md §2.4, §3.2): mint, read, cancel, approve a renewal."""

from __future__ import annotations

from datetime import datetime, timedelta

from aiohttp import web

from actors import messages as m
from contract import api as contract
from web.api import audit_trail, bodies
from web.api.answers import respond, token_json
from web.api.commands import amount, body, ids_of, made_by, submit
from web.api.handlers.merchants import own_merchant_id
from web.api.route import Route
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads import owned

B2B_TTL_S = 1800  # docs/spec.md §8: tokens minted through the B2B API live 30 minutes unless ttl_seconds says otherwise


def expiry(now: datetime, ttl_seconds: int | None, default: int) -> datetime:
    try:
        return now + timedelta(seconds=default if ttl_seconds is None else ttl_seconds)
    except OverflowError:
        raise ApiError(422, "invalid_ttl", "`ttl_seconds` puts the expiry outside any representable date.",
                       "ttl_seconds") from None


async def _target(request: web.Request, mint: bodies.RefundRequestIn) -> tuple[str, str, str, int | None]:
    """(order_id, ref_type, ref_value, ceiling); the legacy body names the order alone (full refundable)."""
    if mint.ref_type is None:
        if mint.order_id is None:
            raise ApiError(422, "missing_field", "`ref_type` is required (or the legacy body `order_id`).", "ref_type")
        if mint.ref_value is not None or mint.amount is not None:
            raise ApiError(422, "missing_field", "`ref_type` is required with `ref_value` and `amount`.", "ref_type")
        return mint.order_id, "order_id", mint.order_id, None
    if mint.order_id is not None:
        raise ApiError(422, "unexpected_field", "Send `order_id` only in the legacy body, without `ref_type`.",
                       "order_id")
    if mint.ref_value is None:
        raise ApiError(422, "missing_field", "`ref_value` is required.", "ref_value")
    if mint.amount is None:
        raise ApiError(422, "missing_field", "`amount` is required.", "amount")
    ceiling = amount(mint.amount, "amount")
    if mint.ref_type == "order_id":
        order_id = mint.ref_value
    elif mint.ref_type == "order_number":
        order_id = await owned.order_id_by_number(request, mint.ref_value, "ref_value")
    else:
        order_id = await owned.order_id_of(request, mint.ref_type, mint.ref_value, "ref_value")
    return order_id, mint.ref_type, mint.ref_value, ceiling


@audit_trail.records("refund_link.created")
async def mint_token(request: web.Request, source: str = "b2b", default_ttl: int = B2B_TTL_S) -> web.Response:
    merchant_id = own_merchant_id(request)
    mint = await body(request, bodies.RefundRequestIn)
    return respond(await issue_token(request, merchant_id, mint, source, default_ttl), status=201)


async def issue_token(request: web.Request, merchant_id: str, mint: bodies.RefundRequestIn, source: str,
                      default_ttl: int) -> dict:
    """The new token as the API answers it; the dashboard's send-link calls this too."""
    order_id, ref_type, ref_value, ceiling = await _target(request, mint)
    ids, api_key, now = ids_of(request), caller(request), ctx(request).clock()
    command = m.MintRefundToken(
        order_id=order_id, merchant_id=merchant_id, livemode=api_key.livemode, at=now,
        token=ids.make("rfqt", "token", 24), ref_type=ref_type, ref_value=ref_value, amount=ceiling,
        expires_at=expiry(now, mint.ttl_seconds, default_ttl), source=source, metadata=mint.metadata or {},
        hide_summary=mint.hide_summary, hide_header=mint.hide_header,
    )
    order = await submit(request, ids, command)
    minted = token_json(ctx(request).settings, order, _made(order, command.token), now)
    await audit_trail.record(request, "refund_link.created", object_id=minted.token, order_id=order_id,
                             details={"source": source})
    return minted


def _made(order, token: str):
    """The token this request made, as the answer holds it (a keyed retry's is the first request's)."""
    return order.token(made_by(token, [t.token for t in order.tokens]))


async def _token_order(request: web.Request):
    token = request.match_info["token"]
    return token, await owned.order(request, await owned.order_id_of(request, "refund_request", token, "token"))


async def get_token(request: web.Request) -> web.Response:
    token, order = await _token_order(request)
    return respond(token_json(ctx(request).settings, order, order.token(token), ctx(request).clock()))


@audit_trail.records("refund.canceled")
async def cancel_token(request: web.Request) -> web.Response:
    return respond(await cancel(request, (await body(request, bodies.TokenCancelIn)).reason))


async def cancel(request: web.Request, reason: str | None) -> dict:
    """Cancel the path's token; `reason` becomes data.reason."""
    token, order = await _token_order(request)
    ids, now = ids_of(request), ctx(request).clock()
    command = m.CancelRefundToken(order_id=order.order_id, merchant_id=order.merchant_id, livemode=order.livemode,
                                  at=now, token=token, reason=reason)
    order = await submit(request, ids, command)
    # A link canceled is a refund canceled before it was asked for: the log's refund.canceled, naming the link.
    await audit_trail.record(request, "refund.canceled", object_id=token, order_id=order.order_id,
                             details={"refund_link": True, "reason": reason})
    return token_json(ctx(request).settings, order, order.token(token), now)


@audit_trail.records("refund_link.created")
async def approve_renewal(request: web.Request) -> web.Response:
    renewal = await body(request, bodies.RenewalApproveIn)
    return respond(await renew(request, renewal.ttl_seconds, B2B_TTL_S), status=201)


async def renew(request: web.Request, ttl_seconds: int | None, default_ttl: int) -> dict:
    """Approve the path's renewal request: the new ACTIVE token, with `old_token` beside it."""
    token, order = await _token_order(request)
    ids, now = ids_of(request), ctx(request).clock()
    command = m.ApproveTokenRenewal(
        order_id=order.order_id, merchant_id=order.merchant_id, livemode=order.livemode, at=now, token=token,
        new_token=ids.make("rfqt", "renewed_token", 24), expires_at=expiry(now, ttl_seconds, default_ttl),
    )
    order = await submit(request, ids, command)
    renewed = token_json(ctx(request).settings, order, _made(order, command.new_token), now,
                         contract.RefundRequestRenewed, old_token=token)
    await audit_trail.record(request, "refund_link.created", object_id=renewed.token, order_id=order.order_id,
                             details={"source": "renewal", "old_token": token})
    return renewed


ROUTES = [
    Route("POST", "/merchants/{merchant_id}/refund-requests", mint_token,
          "Mint a one-time refund-request token (legacy body: order_id alone)", bodies.RefundRequestIn, 201, response=contract.RefundRequest),
    Route("GET", "/refund-requests/{token}", get_token, "Read a refund-request token", response=contract.RefundRequest),
    Route("POST", "/refund-requests/{token}/cancel", cancel_token,
          "Cancel an ACTIVE token (the reason becomes data.reason)", bodies.TokenCancelIn, response=contract.RefundRequest),
    Route("POST", "/refund-requests/{token}/renewal/approve", approve_renewal,
          "Approve a buyer's renewal request: a new ACTIVE token replaces the old", bodies.RenewalApproveIn, 201, response=contract.RefundRequestRenewed),
]
