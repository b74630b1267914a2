"""Settings: auto-approval of customer refunds, receive addresses of this mode's networks, and the API key."""

from __future__ import annotations

from aiohttp import web

from accounts import merchants
from accounts.roles import Can
from cards import accounts
from common.clock import iso
from web.api import audit_trail, bodies
from web.api.handlers import settings as settings_handlers
from web.dashboard import details
from web.dashboard.guard import done, signed_in
from web.dashboard.html import problem, render
from web.edge import decoding, forms
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from webhooks import deliveries, endpoints

# Offered as a hint beside the events field: what an endpoint most often wants (any well-formed type is accepted).
EVENT_TYPES = ("payment.settled", "payment.received", "order.canceled", "payment.refund.requested",
               "payment.refund.executed")
ADDRESS_FIELD = "address."  # + network slug: one labelled field per network of the mode
RECENT = 10  # deliveries shown under each webhook endpoint


async def _endpoints_with_deliveries(request: web.Request) -> list[dict]:
    api_key = caller(request)
    async with ctx(request).pool.acquire() as conn:
        found = []
        for endpoint in await endpoints.listing(conn, api_key.merchant_id, api_key.livemode):
            recent = await deliveries.page(conn, api_key.merchant_id, api_key.livemode,
                                           {"endpoint_id": endpoint.endpoint_id}, None, RECENT)
            found.append({"endpoint": endpoint, "deliveries": [dict(r) for r in recent]})
        return found


async def _api_key(request: web.Request) -> dict | None:
    api_key = caller(request)
    row = await ctx(request).pool.fetchrow(
        "SELECT public_key, created_at, rolled_at FROM api_keys WHERE merchant_id = $1 AND livemode = $2"
        " ORDER BY created_at LIMIT 1", api_key.merchant_id, api_key.livemode)
    return dict(row) if row else None


async def page(request: web.Request, code: int = 200, error: ApiError | None = None, values: dict | None = None,
               secret_key: str | None = None, webhook_secret: dict | None = None,
               webhook_form: dict | None = None) -> web.Response:
    api_key = caller(request)
    current = await merchants.settings(ctx(request).pool, api_key.merchant_id)
    publishable = await accounts.publishable_key(ctx(request).pool, api_key.merchant_id, api_key.livemode)
    refused = await accounts.error(ctx(request).pool, api_key.merchant_id, api_key.livemode) if publishable else None
    return render(
        request, "settings.html", code=code, auto_approve=current.auto_approve_customer_refunds,
        addresses={**current.receive_addresses, **(values or {})},
        networks=[(net, details.name(net.slug)) for net in details.receive_networks(api_key.livemode)],
        error=problem(error),
        api_key=await _api_key(request), secret_key=secret_key,
        webhooks=await _endpoints_with_deliveries(request), webhook_secret=webhook_secret,
        webhook_form=webhook_form, event_types=EVENT_TYPES,
        card={"publishable_key": publishable, "error": refused and refused["last_error"],
              "error_since": refused and iso(refused["last_error_at"])} if publishable else None,
        card_webhook_url=f"{ctx(request).settings.public_base()}/providers/stripe/webhooks/{api_key.merchant_id}",
    )


@signed_in(Can.CONFIGURE)
async def settings_page(request: web.Request) -> web.Response:
    return await page(request)


@signed_in(Can.CONFIGURE)
@audit_trail.records("settings.changed")
async def save_refunds(request: web.Request) -> web.Response:
    posted = await forms.fields(request)
    change = decoding.convert({"auto_approve_customer_refunds": posted.get("auto_approve") == "on"}, bodies.SettingsIn)
    await settings_handlers.apply_change(request, ctx(request).pool, change)
    raise await done(request, request.path.removesuffix("/refunds"), "Customer refund setting saved.")


@signed_in(Can.CONFIGURE)
@audit_trail.records("settings.changed")
async def save_addresses(request: web.Request) -> web.Response:
    """Every network of the mode at once: a field left empty removes that network's address."""
    posted = await forms.fields(request)
    sent = {name.removeprefix(ADDRESS_FIELD): str(value).strip() for name, value in posted.items()
            if name.startswith(ADDRESS_FIELD)}
    shown = {net.slug for net in details.receive_networks(caller(request).livemode)}
    change = decoding.convert({"receive_addresses": {slug: value or None for slug, value in sent.items() if slug in shown}},
                     bodies.SettingsIn)
    try:
        await settings_handlers.apply_change(request, ctx(request).pool, change)
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return await page(request, exc.status, exc, {slug: value for slug, value in sent.items() if slug in shown})
    raise await done(request, request.path.removesuffix("/addresses"), "Receive addresses saved.")


async def _change_card(request: web.Request, card: dict | None, saved: str) -> web.Response:
    change = decoding.convert({"card": card}, bodies.SettingsIn)
    try:
        await settings_handlers.apply_change(request, ctx(request).pool, change)
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return await page(request, exc.status, exc)
    raise await done(request, request.path.removesuffix("/disconnect").removesuffix("/card"), saved)


@signed_in(Can.CONFIGURE)
@audit_trail.records("card_account.changed")
async def connect_card(request: web.Request) -> web.Response:
    posted = await forms.fields(request)
    card = {"provider": "stripe", **{field: str(posted.get(field, "")).strip()
                                     for field in ("secret_key", "publishable_key", "webhook_secret")}}
    return await _change_card(request, card, "Card account connected.")


@signed_in(Can.CONFIGURE)
@audit_trail.records("card_account.changed")
async def disconnect_card(request: web.Request) -> web.Response:
    await forms.fields(request)
    return await _change_card(request, None, "Card account disconnected.")


@signed_in(Can.CONFIGURE)
@audit_trail.records("api_key.rolled", "api_key.created")
async def roll_key(request: web.Request) -> web.Response:
    """A new secret key, shown in this answer only; the old one stops working within seconds (web.auth's cache)."""
    api_key, c = caller(request), ctx(request)
    have = await _api_key(request)
    change = merchants.roll if have else merchants.add_key
    pair = await change(c.pool, c.vault, api_key.merchant_id, api_key.livemode)
    await audit_trail.record(request, "api_key.rolled" if have else "api_key.created", object_id=pair.public_key,
                             details={"rolled": bool(have)})
    return await page(request, secret_key=pair.secret_key)
