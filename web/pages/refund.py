"""The buyer's refund pages on the checkout origin (no credentials): the refund-request form at
/refund-request/{token}, rendered by the token's state as docs/spec.md §3.2 says, and the status page /r/{linkToken}."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Annotated

import msgspec
from aiohttp import web
from msgspec import Meta

from accounts import merchants
from actors import messages as m
from actors.views import OrderView, TokenView, stored_view
from common import money
from common.ids import random_id
from web import i18n
from web.api import chain_inputs
from web.api.answers import refund_json, respond
from web.api.commands import ask, checked
from web.api.receipts import PAID, receipt_path
from web.edge import forms, request_ids
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.pages import params as page_params
from web.pages.checkout import error_page
from web.pages.templating import render
from web.reads import networks

_Text = Annotated[str, Meta(max_length=1000)]


class RefundFormIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    # Asked only of an order paid on chain: a card-paid order's refund goes back to the card.
    refund_to_address: Annotated[str, Meta(min_length=1, max_length=128)] | None = None
    refund_network: Annotated[str, Meta(min_length=1, max_length=40)] | None = None
    refund_token_address: Annotated[str, Meta(min_length=1, max_length=128)] | None = None
    amount: str
    reason: _Text = ""
    note: _Text | None = None
    csrf: str = ""


class RenewalFormIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    customer_note: _Text | None = None
    csrf: str = ""


def csrf_token(request: web.Request, token: str) -> str:
    """Bound to the link and the server's key: stateless, so it works inside third-party iframes too."""
    return hmac.new(ctx(request).derived.refund_form_csrf, token.encode(), hashlib.sha256).hexdigest()


async def _token(request: web.Request) -> tuple[OrderView, TokenView, str] | None:
    """The token's order, the token and the merchant's name, which the form shows as the checkout page does."""
    token = request.match_info["token"]
    row = await ctx(request).pool.fetchrow(
        "SELECT o.state, o.state_schema, m.name FROM refund_tokens t JOIN orders o USING (order_id)"
        " JOIN merchants m ON m.merchant_id = o.merchant_id WHERE t.token = $1", token
    )
    if row is None:
        return None
    order = stored_view(row["state"], row["state_schema"])
    return order, order.token(token), row["name"]


# The refund pages' own strings, in every locale, beside the checkout page's tables.
_TABLES = i18n.load(Path(i18n.__file__).parent / "refund")


def _page(request: web.Request) -> tuple[page_params.PageParams, i18n.Translator]:
    params = page_params.read(request)
    t = i18n.Translator(params.locale)
    t.table = {**t.table, **_TABLES[t.locale]}
    return params, t


async def form_page(request: web.Request) -> web.Response:
    found = await _token(request)
    params, t = _page(request)
    if found is None:
        return error_page(t, params, 404, "iframe_load_error", "No such refund request.")
    order, token, merchant_name = found
    status = token.status_at(ctx(request).clock())
    refund = _public_refund(request, order, order.refund(token.refund_id)) if token.refund_id else None
    first_payment = order.payments[0] if order.payments else None
    config = {"sdkMode": params.sdk_mode, "status": status.value}
    return render(
        "refund_request.html", t, config, order=order, token=token, status=status.value, refund=refund,
        merchant_name=merchant_name, livemode=order.livemode,
        ceiling=money.format(token.amount), money=money,
        networks=networks.registry().of_mode(order.livemode), chosen=first_payment.network if first_payment else None,
        card_paid=chain_inputs.card_paid(order),
        # A prefill only (escaped, and validated on submit): any family's address may come here.
        wallet_address=request.query.get("wallet_address", "")[:128], csrf=csrf_token(request, token.token),
        hide_summary=token.hide_summary or params.hide_summary, hide_header=token.hide_header or params.hide_header,
    )


def _check_origin(request: web.Request, token: str, sent: str) -> None:
    forms.same_origin(request)
    # The token in the URL is the buyer's only credential and no cookie rides along, so a request without the
    # page's field (a script, an app) is no forgery; a field that is sent must still be this page's.
    if sent and not hmac.compare_digest(sent, csrf_token(request, token)):
        raise ApiError(403, "csrf_token_invalid", "The form is stale or forged; reload the page.", "csrf")


async def _ask(request: web.Request, command: m.Command) -> OrderView:
    envelope = m.Envelope(command_id=random_id("cmd"), command=checked(command), request_id=request_ids.of(request))
    return await ask(request, envelope, timeout_message="The request is taking long; reload the page to see its state.")


async def _posted(request: web.Request, kind: type):
    """The token's order, the token and the verified form of a buyer's POST."""
    found = await _token(request)
    if found is None:
        raise ApiError(404, "refund_request_not_found", "No such refund request.", "token")
    order, token, _merchant_name = found
    form = await forms.posted(request, kind)
    _check_origin(request, token.token, form.csrf)
    return order, token, form


def _chain_destination(order: OrderView, form: RefundFormIn) -> m.Destination:
    for field in ("refund_to_address", "refund_network", "refund_token_address"):
        if getattr(form, field) is None:
            raise ApiError(422, "missing_field", f"`{field}` is required.", field)
    return chain_inputs.refund_destination(form.refund_to_address, form.refund_network, form.refund_token_address,
                                           order.livemode)


async def submit(request: web.Request) -> web.StreamResponse:
    order, token, form = await _posted(request, RefundFormIn)
    destination = chain_inputs.CARD_DESTINATION if chain_inputs.card_paid(order) else _chain_destination(order, form)
    micros = chain_inputs.refund_amount(destination, form.amount)
    settings = await merchants.settings(ctx(request).pool, order.merchant_id)
    command = m.CreateRefund(
        order_id=order.order_id, merchant_id=order.merchant_id, livemode=order.livemode, at=ctx(request).clock(),
        refund_id=random_id("re"), link_token=random_id("rl", 16), amount=micros,
        reason=form.reason, destination=destination, flow="customer",
        auto_approve=settings.auto_approve_customer_refunds, note=form.note, token=token.token,
    )
    order = await _ask(request, command)
    refund = order.refund(command.refund_id)
    if not forms.wants_json(request):
        raise web.HTTPSeeOther(f"/r/{refund.link_token}")
    return respond({"linkToken": refund.link_token, "refundId": refund.refund_id, "status": refund.status.value},
                   status=201)


async def request_renewal(request: web.Request) -> web.StreamResponse:
    order, token, form = await _posted(request, RenewalFormIn)
    command = m.RequestTokenRenewal(order_id=order.order_id, merchant_id=order.merchant_id, livemode=order.livemode,
                                    at=ctx(request).clock(), token=token.token, customer_note=form.customer_note)
    order = await _ask(request, command)
    if not forms.wants_json(request):
        raise web.HTTPSeeOther(request.path.removesuffix("/renewal"))
    return respond({"status": order.token(token.token).status.value})


async def _refund_by_link(request: web.Request):
    link = request.match_info["link_token"]
    row = await ctx(request).pool.fetchrow(
        "SELECT o.state, o.state_schema FROM refunds r JOIN orders o USING (order_id) WHERE r.link_token = $1", link
    )
    if row is None:
        return None, None
    order = stored_view(row["state"], row["state_schema"])
    return order, next(r for r in order.refunds if r.link_token == link)


def _public_refund(request: web.Request, order: OrderView, refund) -> dict:
    """What the buyer may see: the refund's own facts, nothing of the merchant's records."""
    full = msgspec.to_builtins(refund_json(ctx(request).settings, order, refund))
    keys = ("refund_id", "status", "amount", "refund_to_address", "refund_network", "refund_token_address",
            "execution", "created_at", "updated_at")
    receipt = receipt_path(order) if order.status in PAID else None
    return {"linkToken": refund.link_token, **{k: full[k] for k in keys}, "order_number": str(order.order_number),
            "receipt_url": receipt}


async def status_page(request: web.Request) -> web.Response:
    order, refund = await _refund_by_link(request)
    params, t = _page(request)
    if refund is None:
        return error_page(t, params, 404, "iframe_load_error", "No such refund.")
    card = _public_refund(request, order, refund)
    config = {"sdkMode": params.sdk_mode, "refund": {"linkToken": card["linkToken"], "refundId": card["refund_id"]}}
    return render("refund_status.html", t, config, refund=card)


async def status_json(request: web.Request) -> web.Response:
    order, refund = await _refund_by_link(request)
    if refund is None:
        raise ApiError(404, "refund_not_found", "No such refund.", "link_token")
    return respond(_public_refund(request, order, refund))
