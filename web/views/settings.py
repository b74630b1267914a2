"""Merchant settings: auto-approval of customer refunds and receive addresses per network."""

from __future__ import annotations

from aiohttp import web
from msgspec.structs import replace

from contract import api as contract
from common import merchants
from web import bodies, destinations, idempotency
from web.commands import body
from web.context import ctx
from web.render import respond
from web.route import Route
from web.views.merchants import own_merchant_id


def _json(merchant_id: str, s: merchants.Settings) -> contract.MerchantSettings:
    return contract.MerchantSettings(merchant_id=merchant_id, auto_approve_customer_refunds=s.auto_approve_customer_refunds,
                                     receive_addresses=dict(sorted(s.receive_addresses.items())))


async def get_settings(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    return respond(_json(merchant_id, await merchants.settings(ctx(request).pool, merchant_id)))


async def update_settings(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    change = await body(request, bodies.SettingsIn)

    async def work(conn) -> web.Response:
        return respond(await apply_change(conn, merchant_id, change))

    return await idempotency.once(request, work)


async def apply_change(db, merchant_id: str, change: bodies.SettingsIn) -> contract.MerchantSettings:
    """Validate and save a settings change (db: a pool or a connection); the dashboard's settings form calls this
    too."""
    current = await merchants.settings(db, merchant_id)
    addresses = dict(current.receive_addresses)
    for slug, address in (change.receive_addresses or {}).items():
        param = f"receive_addresses.{slug}"
        net = destinations.network(slug, param)
        if address is None:
            addresses.pop(net.slug, None)
        else:
            addresses[net.slug] = destinations.address(net, address, param)
    new = replace(current, receive_addresses=addresses)
    if change.auto_approve_customer_refunds is not None:
        new = replace(new, auto_approve_customer_refunds=change.auto_approve_customer_refunds)
    await merchants.save_settings(db, merchant_id, new)
    return _json(merchant_id, new)


ROUTES = [
    Route("GET", "/merchants/{merchant_id}/settings", get_settings, "Read the merchant's settings", response=contract.MerchantSettings),
    Route("PATCH", "/merchants/{merchant_id}/settings", update_settings,
          "Change auto-approval of customer refunds and receive addresses", bodies.SettingsIn, response=contract.MerchantSettings),
]
