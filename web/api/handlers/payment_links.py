"""Payment links through the signed API: create, list, read and change (archive with `status`)."""

from __future__ import annotations

from datetime import datetime

import msgspec
from aiohttp import web

from common import money, order_limits
from common.clock import iso
from common.config import Settings
from contract import api as contract
from web.api import audit_trail, link_store
from web.api.answers import respond
from web.api.commands import amount as parse_amount
from web.api.commands import body
from web.api.handlers.merchants import own_merchant_id
from web.api.link_bodies import PaymentLinkIn, PaymentLinkPatchIn
from web.api.route import Route
from web.edge import idempotency
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads.pagination import Page

BASE = "/merchants/{merchant_id}/payment-links"
LINK_LIST = contract.page_of(contract.PaymentLink)


def link_url(settings: Settings, payment_link_id: str) -> str:
    return f"{settings.checkout_base()}/l/{payment_link_id}"


def _money(micros: int | None) -> str | None:
    return None if micros is None else money.format(micros)


def link_json(settings: Settings, link: link_store.PaymentLink, totals: link_store.Totals, now) -> contract.PaymentLink:
    return contract.PaymentLink(
        payment_link_id=link.payment_link_id, livemode=link.livemode, url=link_url(settings, link.payment_link_id),
        name=link.name, description=link.description, amount=_money(link.amount),
        min_amount=_money(link.min_amount), max_amount=_money(link.max_amount), max_uses=link.max_uses,
        uses=link.uses, expires_at=iso(link.expires_at) if link.expires_at else None, status=link.status,
        unavailable_reason=link.unavailable(now), orders=totals.orders, paid_orders=totals.paid_orders,
        amount_paid=money.format(totals.amount_paid), created_at=iso(link.created_at),
        updated_at=iso(link.updated_at),
    )


async def answer(request: web.Request, conn, links: list[link_store.PaymentLink]) -> list[contract.PaymentLink]:
    totals = await link_store.totals(conn, [link.payment_link_id for link in links])
    c = ctx(request)
    return [link_json(c.settings, link, totals.get(link.payment_link_id, link_store.Totals()), c.clock())
            for link in links]


def _price(link_in: PaymentLinkIn) -> dict[str, int | None]:
    """The link's amount, or the bounds of the amount a buyer enters: checked here, before anything is written."""
    prices = {name: parse_amount(getattr(link_in, name), name) if getattr(link_in, name) is not None else None
              for name in ("amount", "min_amount", "max_amount")}
    if prices["amount"] is not None and (prices["min_amount"] is not None or prices["max_amount"] is not None):
        raise ApiError(422, "amount_and_bounds",
                       "Send `amount` for a fixed price, or `min_amount`/`max_amount` for one the buyer enters.",
                       "amount")
    low, high = prices["min_amount"], prices["max_amount"]
    if low is not None and high is not None and low > high:
        raise ApiError(422, "min_above_max", "`min_amount` must not exceed `max_amount`.", "min_amount")
    return prices


def storable_expiry(expires_at: datetime | None) -> None:
    """A link's expiry is a time the service records (common.order_limits), not one PostgreSQL's driver cannot
    convert."""
    if expires_at is not None and not order_limits.EARLIEST <= expires_at < order_limits.LATEST:
        raise ApiError(422, "expires_out_of_range",
                       f"`expires_at` must lie between {order_limits.EARLIEST.date()}"
                       f" and {order_limits.LATEST.date()}.", "expires_at")


def checked(link_in: PaymentLinkIn, now: datetime) -> dict:
    """The new link's columns, once its body keeps the rules the schema cannot say (the API's and the
    dashboard's form alike); a refusal names the field."""
    if link_in.expires_at is not None and link_in.expires_at <= now:
        raise ApiError(422, "expires_in_the_past", "`expires_at` must lie in the future.", "expires_at")
    storable_expiry(link_in.expires_at)
    return dict(name=link_in.name, description=link_in.description, max_uses=link_in.max_uses,
                expires_at=link_in.expires_at, **_price(link_in))


async def create(request: web.Request, conn, columns: dict) -> link_store.PaymentLink:
    """The API's and the dashboard's one way to make a link, recorded in the audit log with it."""
    api_key = caller(request)
    link = await link_store.create(conn, api_key.merchant_id, api_key.livemode, ctx(request).clock(), **columns)
    await audit_trail.record(request, "payment_link.created", db=conn, object_id=link.payment_link_id, details={
        "name": link.name, "amount": _money(link.amount), "min_amount": _money(link.min_amount),
        "max_amount": _money(link.max_amount), "max_uses": link.max_uses,
        "expires_at": iso(link.expires_at) if link.expires_at else None})
    return link


async def update(request: web.Request, conn, link: link_store.PaymentLink, changes: dict) -> link_store.PaymentLink:
    """The API's and the dashboard's one way to change a link; archiving or activating alone is recorded as such."""
    changed = await link_store.update(conn, link, changes, ctx(request).clock())
    action = {link_store.ARCHIVED: "payment_link.archived", link_store.ACTIVE: "payment_link.activated"}.get(
        changes["status"], "payment_link.updated") if set(changes) == {"status"} else "payment_link.updated"
    await audit_trail.record(request, action, db=conn, object_id=link.payment_link_id, details={"changed": {
        name: iso(value) if isinstance(value, datetime) else value for name, value in changes.items()}})
    return changed


@audit_trail.records("payment_link.created")
async def create_link(request: web.Request) -> web.Response:
    own_merchant_id(request)
    columns = checked(await body(request, PaymentLinkIn), ctx(request).clock())

    async def work(conn) -> web.Response:
        return respond((await answer(request, conn, [await create(request, conn, columns)]))[0], status=201)

    return await idempotency.once(request, work)


async def link_of(request: web.Request, conn, *, lock: bool = False) -> link_store.PaymentLink:
    """The path's link, which must be the caller's merchant's and mode's (otherwise 404)."""
    found = await link_store.get(conn, request.match_info["payment_link_id"], ctx(request).clock(),
                                 own_merchant_id(request), caller(request).livemode, lock=lock)
    if found is None:
        raise ApiError(404, "payment_link_not_found", "No such payment link.", "payment_link_id")
    return found


async def list_links(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    page = Page(request, ("status",))
    status = page.filters["status"]
    if status not in (None, link_store.ACTIVE, link_store.ARCHIVED):
        raise ApiError(422, "invalid_status", "`status` must be active or archived.", "status")
    async with ctx(request).pool.acquire() as conn:
        links = await link_store.listing(conn, merchant_id, caller(request).livemode, ctx(request).clock(), page.before,
                                         page.limit + 1, status)
        shown = await answer(request, conn, links[: page.limit])
    return respond(page.answer(LINK_LIST, shown, links, lambda link: (link.created_at, link.payment_link_id)))


async def get_link(request: web.Request) -> web.Response:
    async with ctx(request).pool.acquire() as conn:
        return respond((await answer(request, conn, [await link_of(request, conn)]))[0])


@audit_trail.records("payment_link.updated", "payment_link.archived", "payment_link.activated")
async def update_link(request: web.Request) -> web.Response:
    own_merchant_id(request)
    patch = await body(request, PaymentLinkPatchIn)
    changes = {name: value for name in patch.__struct_fields__
               if (value := getattr(patch, name)) is not msgspec.UNSET}
    storable_expiry(changes.get("expires_at"))

    async def work(conn) -> web.Response:
        link = await link_of(request, conn, lock=True)
        if changes.get("max_uses") is not None and changes["max_uses"] < link.uses:
            raise ApiError(422, "max_uses_below_uses",
                           f"The link was used {link.uses} times already: `max_uses` cannot be lower.", "max_uses")
        changed = await update(request, conn, link, changes) if changes else link
        return respond((await answer(request, conn, [changed]))[0])

    return await idempotency.once(request, work)


ROUTES = [
    Route("POST", BASE, create_link, "Create a payment link: a fixed amount, or one the buyer enters",
          PaymentLinkIn, 201, response=contract.PaymentLink),
    Route("GET", BASE, list_links, "List payment links newest first, with their orders and money; filter by status",
          response=LINK_LIST),
    Route("GET", BASE + "/{payment_link_id}", get_link, "Read a payment link", response=contract.PaymentLink),
    Route("PATCH", BASE + "/{payment_link_id}", update_link,
          "Change a payment link's name, description, use limit or expiry, or archive it (status)",
          PaymentLinkPatchIn, response=contract.PaymentLink),
]
