"""The dashboard's Export buttons: the API's export files for the filters on screen, of the signed-in user's
merchant and mode. Orders and payments for those who see every order, refunds for those who refund: owners and
managers; a cashier is refused (403 `role_forbidden`, as JSON: a download has no page to show)."""

from __future__ import annotations

from aiohttp import web

from accounts.roles import Can
from web.api import audit_trail
from web.api.handlers import exports as api_exports
from web.dashboard.guard import signed_in


@signed_in(Can.SEE_ORDERS, json=True)
@audit_trail.records("export.downloaded")
async def orders(request: web.Request) -> web.StreamResponse:
    return await api_exports.stream(request, "orders")


@signed_in(Can.SEE_ORDERS, json=True)
@audit_trail.records("export.downloaded")
async def payments(request: web.Request) -> web.StreamResponse:
    return await api_exports.stream(request, "payments")


@signed_in(Can.REFUND, json=True)
@audit_trail.records("export.downloaded")
async def refunds(request: web.Request) -> web.StreamResponse:
    return await api_exports.stream(request, "refunds")
