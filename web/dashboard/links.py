"""Payment links in the dashboard (owner and manager): each link's shareable URL and QR, its orders, paid total and
conversion, a form to make one, and archiving. The same checks and writes as the B2B calls
(web/api/handlers/payment_links.py)."""

from __future__ import annotations

from aiohttp import web

from accounts.roles import Can
from web.api import audit_trail, link_store
from web.api.handlers import payment_links
from web.api.link_bodies import PaymentLinkIn
from web.dashboard.guard import done, signed_in
from web.dashboard.html import problem, render
from web.edge import decoding
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.edge.forms import form
from web.pages import qr

SHOWN = 100  # the newest links of the mode; the API pages through every one


def _conversion(link) -> str:
    return f"{round(100 * link.paid_orders / link.orders)} %" if link.orders else "–"


async def _page(request: web.Request, code: int = 200, error: ApiError | None = None,
                entered: dict | None = None) -> web.Response:
    api_key = caller(request)
    async with ctx(request).pool.acquire() as conn:
        found = await link_store.listing(conn, api_key.merchant_id, api_key.livemode, ctx(request).clock(), None, SHOWN)
        links = await payment_links.answer(request, conn, found)
    shown = [{"link": link, "conversion": _conversion(link), "qr": qr.svg(link.url, "Payment link QR code")}
             for link in links]
    return render(request, "payment_links.html", code=code, links=shown, problem=problem(error),
                  entered=entered or {})


@signed_in(Can.SHARE_LINKS)
async def links_page(request: web.Request) -> web.Response:
    return await _page(request)


@signed_in(Can.SHARE_LINKS)
@audit_trail.records("payment_link.created")
async def create(request: web.Request) -> web.Response:
    entered = await form(request)
    now = ctx(request).clock()
    fields = dict(entered)
    if "max_uses" in fields:
        fields["max_uses"] = int(fields["max_uses"]) if fields["max_uses"].isdigit() else fields["max_uses"]
    if "expires_at" in fields:  # a datetime-local field: the dashboard's times are UTC
        fields["expires_at"] = fields["expires_at"] + ("" if fields["expires_at"].endswith("Z") else ":00Z")
    try:
        columns = payment_links.checked(decoding.convert(fields, PaymentLinkIn), now)
    except ApiError as refused:
        return await _page(request, 422, refused, entered)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        link = await payment_links.create(request, conn, columns)
    raise await done(request, request.path, f"Payment link “{link.name}” created.")


async def _set_status(request: web.Request, status: str, said: str) -> web.Response:
    api_key, now = caller(request), ctx(request).clock()
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        link = await link_store.get(conn, request.match_info["payment_link_id"], now, api_key.merchant_id,
                                    api_key.livemode, lock=True)
        if link is None:
            raise ApiError(404, "payment_link_not_found", "No such payment link.", "payment_link_id")
        await payment_links.update(request, conn, link, {"status": status})
    raise await done(request, request.path.rsplit("/", 2)[0], f"Payment link “{link.name}” {said}.")


@signed_in(Can.SHARE_LINKS)
@audit_trail.records("payment_link.archived")
async def archive(request: web.Request) -> web.Response:
    return await _set_status(request, link_store.ARCHIVED, "archived: buyers can no longer pay through it")


@signed_in(Can.SHARE_LINKS)
@audit_trail.records("payment_link.activated")
async def activate(request: web.Request) -> web.Response:
    return await _set_status(request, link_store.ACTIVE, "active again")
