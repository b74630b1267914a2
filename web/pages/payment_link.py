"""The buyer's page of a payment link, `/l/{payment_link_id}` on the checkout origin.

Showing the page writes nothing. Choosing to pay takes one use of the link and sends the new order's command; the
buyer is then sent to that order's own checkout session. A closed link (archived, expired, used up) says so and
makes nothing. Posts are limited per client address on top of the hosted pages' own bucket."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from aiohttp import web

from accounts.receipt_keys import receipt_url
from actors import messages as m
from common import money
from common.ids import random_id
from web import i18n
from web.api import link_store
from web.api.answers import checkout_url, respond
from web.api.commands import amount as parse_amount
from web.api.commands import ask, checked
from web.api.link_bodies import PayIn
from web.edge import forms, rate_limits, request_ids
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.pages import params as page_params
from web.pages.checkout import error_page
from web.pages.templating import render

_TABLES = i18n.load(Path(i18n.__file__).parent / "link")
# Orders a client address may open through payment links: a tenth of what it may ask of the hosted pages
# (PAGE_RATE_LIMIT_RPS, PAGE_RATE_LIMIT_BURST; by default 2 a second, 10 at once), in a bucket of their own.
ORDERS_SHARE = 10
_ERRORS = {"amount": "link_amount_invalid", "customer_email": "link_email_invalid"}


def _translator(request: web.Request) -> tuple[page_params.PageParams, i18n.Translator]:
    params = page_params.read(request)
    return params, i18n.Translator(params.locale).including(_TABLES)


async def _found(request: web.Request) -> tuple[link_store.PaymentLink, str] | None:
    c = ctx(request)
    return await link_store.with_merchant_name(c.pool, request.match_info["payment_link_id"], c.clock())


def _show(t: i18n.Translator, link: link_store.PaymentLink, merchant_name: str, now, code: int = 200,
          error: str | None = None, entered: str = "") -> web.Response:
    closed = link.unavailable(now)
    bounds = {"min": money.format(link.min_amount) if link.min_amount else None,
              "max": money.format(link.max_amount) if link.max_amount else None}
    answer = render("payment_link.html", t, {"sdkMode": None}, code=410 if closed else code, link=link,
                    merchant_name=merchant_name, closed=closed, error=error, entered=entered, bounds=bounds,
                    amount=money.format(link.amount) if link.amount else None)
    answer.headers["Referrer-Policy"] = "same-origin"
    return answer


async def page(request: web.Request) -> web.Response:
    params, t = _translator(request)
    found = await _found(request)
    if found is None:
        return error_page(t, params, 404, "payment_link_not_found", "No such payment link.")
    return _show(t, *found, ctx(request).clock())


def _amount(link: link_store.PaymentLink, entered: str | None) -> int:
    if link.amount is not None:
        return link.amount
    if entered is None:
        raise ApiError(422, "missing_field", "`amount` is required: this link's buyer enters the amount.", "amount")
    value = parse_amount(entered.strip(), "amount")
    if (link.min_amount and value < link.min_amount) or (link.max_amount and value > link.max_amount):
        raise ApiError(422, "amount_out_of_range", "`amount` is outside the range the merchant allows.", "amount")
    return value


async def _limited(request: web.Request) -> None:
    settings = ctx(request).settings
    verdict = await rate_limits.take(request, f"link-orders:{request.remote or 'unknown'}",
                                     settings.page_rate_limit_rps / ORDERS_SHARE,
                                     max(1, settings.page_rate_limit_burst // ORDERS_SHARE))
    if not verdict.allowed:
        raise verdict.refusal("rate_limited", "Too many orders from this address; retry after `Retry-After` seconds.")


async def pay(request: web.Request) -> web.StreamResponse:
    params, t = _translator(request)
    wants_json = forms.wants_json(request)
    found = await _found(request)
    if found is None:
        raise ApiError(404, "payment_link_not_found", "No such payment link.", "payment_link_id")
    link, merchant_name = found
    forms.same_origin(request)
    now = ctx(request).clock()
    try:
        chosen = await forms.posted(request, PayIn)
        owed = _amount(link, chosen.amount)
    except ApiError as refused:
        if wants_json or refused.status != 422:
            raise
        entered = (await forms.form(request)).get("amount", "")
        return _show(t, link, merchant_name, now, 422, t(_ERRORS.get(refused.param, "link_amount_invalid")), entered)
    await _limited(request)
    session = await _order(request, link, owed, chosen.customer_email)
    if session is None:  # closed since the page was read: say why as it stands now
        current = (await _found(request))[0]
        if wants_json:
            raise ApiError(410, f"payment_link_{current.unavailable(now) or 'closed'}", "This payment link is closed.")
        return _show(t, current, merchant_name, now)
    url = checkout_url(ctx(request).settings, session.session_key)
    if wants_json:
        return respond({"session_key": session.session_key, "checkout_url": url}, status=201)
    query = f"?locale={params.locale}" if "locale" in request.query else ""
    raise web.HTTPSeeOther(f"/c/{session.session_key}{query}")


async def _order(request: web.Request, link: link_store.PaymentLink, owed: int,
                 email: str | None) -> m.NewSession | None:
    """The buyer's own order and session, made through the order actor after a use of the link was taken; None
    when the link closed (another buyer took its last use, say). A failed creation gives the use back."""
    c = ctx(request)
    now = c.clock()
    mode = "live" if link.livemode else "test"
    order_id = random_id("ord")
    session = m.NewSession(session_id=random_id("cs"), session_key=random_id(f"cs_{mode}", 24),
                           expires_at=now + timedelta(seconds=c.settings.session_ttl_s))
    command = checked(m.CreateOrder(
        order_id=order_id, merchant_id=link.merchant_id, livemode=link.livemode, at=now, amount=owed,
        line_items=(m.LineItem(link.name, 1, owed),), session=session, payment_link_id=link.payment_link_id,
        receipt_url=receipt_url(c.settings, c.derived.receipts, order_id), customer_email=email))
    async with c.pool.acquire() as conn, conn.transaction():
        if not await link_store.take_use(conn, link.payment_link_id, order_id, now, session.expires_at):
            return None
    envelope = m.Envelope(command_id=random_id("cmd"), command=command, request_id=request_ids.of(request))
    try:
        await ask(request, envelope, timeout_message="The order is taking long; reload the page.")
    except ApiError as failed:
        # Refused by the order core: no order exists, so the use returns. A timeout or a fault keeps it, since
        # the command may still make its order, which then counts.
        if failed.status < 500:
            await link_store.give_back(c.pool, order_id)
        raise
    return session
