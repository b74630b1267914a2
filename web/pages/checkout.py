"""The checkout page `/c/{session_key}` and the status it polls at `/c/{session_key}/status`."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import msgspec
from aiohttp import web

from cards import accounts
from cards.amounts import charge_cents, micros
from chain_watchers import UnknownNetwork, unique_amounts
from common import money
from common.config import Settings
from notify import receipt_mailer
from web.api.answers import respond
from web.api.bodies import Email
from web.api.receipts import PAID, receipt_path
from web.edge import forms
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.i18n import Translator
from web.pages import params as page_params
from web.pages import qr, session
from web.pages.quotes import Quote, accepted, quotes
from web.pages.status import PAYABLE, status_json
from web.pages.templating import CSP, csp_with, render
from web.reads import networks

log = logging.getLogger(__name__)
POLL_MS = 2500
# The messages the page's script needs after load; the rest are rendered on the server.
SCRIPT_MESSAGES = (
    "copied", "wallet_connected", "wallet_confirm", "wallet_failed", "wallet_switch", "wallet_sent",
    "status_waiting", "status_confirming", "status_confirmations", "status_paid", "status_partially_paid",
    "status_expired", "status_superseded", "status_canceled", "expires_in", "returning", "cancel",
    "back_to_merchant", "amount_paid", "amount_due", "amount_received", "card_processing", "card_failed",
    "card_accepted",
)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def card_csp(settings: Settings) -> str:
    """What the provider's script needs on the page: itself, its frames (3-D Secure) and its API."""
    script, api = _origin(settings.stripe_js_url), _origin(settings.stripe_api_base)
    frames = (script, "https://hooks.stripe.com") if script == "https://js.stripe.com" else (script,)
    return csp_with(script_src=(script,), frame_src=frames, connect_src=tuple(dict.fromkeys((api, script))))


def required_confirmations(slug: str) -> int | None:
    try:
        return networks.registry().network(slug).confirmations
    except UnknownNetwork:
        return None


def error_page(t: Translator, params: page_params.PageParams, status: int, code: str, message: str) -> web.Response:
    """A page that cannot be used tells a framing SDK so (SERVICE_ERROR) and the buyer in words."""
    title, body = ("not_found_title", "not_found_body") if status == 404 else ("error_title", "error_body")
    config = {"sdkMode": params.sdk_mode, "error": {"code": code, "message": message}}
    return render("error.html", t, config, code=status, title=t(title), body=t(body))


def _wallet_quote(q: Quote) -> dict:
    return {"network": q.network, "networkName": q.network_name, "chainId": q.chain_id,
            "transfer": {"to": q.token_address, "data": q.transfer_data} if q.transfer_data else None}


async def page(request: web.Request) -> web.Response:
    params = page_params.read(request)
    t = Translator(params.locale)
    try:
        return await _page(request, params, t)
    except web.HTTPException:
        raise
    except Exception:
        log.exception("checkout page failed")
        return error_page(t, params, 500, "server_error", "The checkout page could not be shown")


async def _page(request: web.Request, params: page_params.PageParams, t: Translator) -> web.Response:
    key = request.match_info["session_key"]
    found = await session.load(ctx(request).pool, key)
    if found is None:
        return error_page(t, params, 404, "session_not_found", "No such session")
    order, s = found.order, found.session
    now = ctx(request).clock()
    current = status_json(order, s, found.attempts, now, required_confirmations,
                          receipt_path(order))
    offered, card = [], None
    if current["state"] in PAYABLE:
        publishable = await accounts.publishable_key(ctx(request).pool, order.merchant_id, order.livemode)
        if publishable:
            card = {"publishableKey": publishable, "scriptUrl": ctx(request).settings.stripe_js_url,
                    "paymentsUrl": f"/c/{key}/card-payments",
                    "amount": money.format(micros(charge_cents(order.residual)))}
        registry = networks.registry()
        # EVM and TRON transfers carry no reference: each session quotes an amount of its own there.
        payable_on = accepted(registry, order.livemode, found.receive_addresses)
        targets = {net.slug: address for net, address in payable_on if net.family in unique_amounts.FAMILIES}
        amounts = await unique_amounts.assign(
            ctx(request).pool, session_id=s.session_id, order_id=order.order_id, merchant_id=order.merchant_id,
            livemode=order.livemode, due=order.residual, expires_at=s.expires_at, now=now, targets=targets)
        offered = quotes(registry, order.livemode, found.receive_addresses, order.residual, s.session_id, amounts)
    # docs/spec.md §4.3: return_url stands in only where the session has no URL of its own.
    success_url = s.success_url or params.return_url
    cancel_url = s.cancel_url or params.return_url
    config = {
        "sdkMode": params.sdk_mode,
        "sessionId": s.session_key,  # what the SDK calls sessionId
        "statusUrl": f"/c/{key}/status",
        "attemptsUrl": f"/c/{key}/payment-attempts",
        "pollMs": POLL_MS,
        "status": current,
        "successUrl": success_url,
        "cancelUrl": cancel_url,
        "wallet": {"address": params.wallet_address, "chainId": params.wallet_chain_id},
        "quotes": [_wallet_quote(q) for q in offered],
        "card": card,
        "messages": t.subset(SCRIPT_MESSAGES),
    }
    items = [{"name": i.name, "quantity": i.quantity, "amount": money.format(i.unit_amount * i.quantity)}
             for i in order.line_items]
    # Test mode only: the page pays itself as the test helper would (web/pages/simulated.py); never on a live page.
    simulate = None if order.livemode or current["state"] == "paid" else {
        "url": f"/c/{key}/simulated-payments",
        "amount": current["amount_due"] if order.residual > 0 else money.format(order.amount_owed)}
    return render(
        "checkout.html", t, config, params=params, status=current, payable=current["state"] in PAYABLE,
        merchant_name=found.merchant_name, livemode=order.livemode, order_number=order.order_number,
        items=items, total=money.format(order.amount_owed),
        quotes=[(q, qr.svg(q.link, f"{q.symbol} {q.network_name}") if q.link else None) for q in offered],
        cancel_url=cancel_url, can_cancel=params.framed or cancel_url is not None, card=card, simulate=simulate,
        emailed=request.query.get("emailed") == "1",
        csp=card_csp(ctx(request).settings) if card else CSP,
    )


class ReceiptEmailIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    customer_email: Email


async def receipt_email(request: web.Request) -> web.StreamResponse:
    """The buyer's address for the receipt, given on the checkout page: the key in the URL is the buyer's only
    credential, as on the refund form. The address is never shown again, on this page or any other."""
    key = request.match_info["session_key"]
    found = await session.load(ctx(request).pool, key, with_merchant=False)
    if found is None:
        raise ApiError(404, "session_not_found", "No such checkout session.", "session_key")
    given = await forms.posted(request, ReceiptEmailIn)
    now = ctx(request).clock()
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        await conn.execute("INSERT INTO receipt_emails (order_id, email, given_at) VALUES ($1, $2, $3)"
                           " ON CONFLICT (order_id) DO UPDATE SET email = excluded.email, given_at = excluded.given_at",
                           found.order.order_id, given.customer_email, now)
        await receipt_mailer.mail_when_given(conn, found.order.order_id, found.order.status in PAID, now)
    if request.content_type == "application/json":
        return respond({"given": True}, status=201)
    raise web.HTTPSeeOther(f"/c/{key}?emailed=1")


async def status(request: web.Request) -> web.Response:
    found = await session.load(ctx(request).pool, request.match_info["session_key"], with_merchant=False)
    if found is None:
        raise ApiError(404, "session_not_found", "No such checkout session.", "session_key")
    answer = respond(status_json(found.order, found.session, found.attempts, ctx(request).clock(),
                                 required_confirmations, receipt_path(found.order)))
    answer.headers["Cache-Control"] = "no-store"
    return answer
