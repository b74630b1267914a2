"""Orders and checkout sessions (docs/spec.md §4.2)."""

from __future__ import annotations

from datetime import datetime, timedelta

from aiohttp import web

from accounts.receipt_keys import receipt_url
from actors import messages as m
from actors.views import OrderView
from common import money, order_limits
from contract import api as contract
from web.api import audit_trail, bodies
from web.api.answers import order_answer, respond, session_created_answer
from web.api.commands import Ids, amount, body, ids_of, submit
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads import order_filters, owned
from web.reads.pagination import Page

ORDER_LIST = contract.page_of(contract.Order)


PRICE_FIELDS = ("unit_amount", "unit_price", "price")


def _unit_amount(item: bodies.LineItemIn, where: str) -> int:
    given = [(name, getattr(item, name)) for name in PRICE_FIELDS if getattr(item, name) is not None]
    one_of = "send exactly one of `unit_amount`, `unit_price`, `price`"
    if not given:
        raise ApiError(422, "missing_field", f"`{where}` has no price: {one_of}.", f"{where}.unit_amount")
    if len(given) > 1:
        raise ApiError(422, "conflicting_fields", f"`{where}` has several prices: {one_of}.", f"{where}.unit_amount")
    name, text = given[0]
    return amount(text, f"{where}.{name}")


def _owed(order_in: bodies.OrderIn, max_items: int) -> tuple[int, tuple[m.LineItem, ...]]:
    if order_in.line_items is not None and order_in.items is not None:
        raise ApiError(422, "conflicting_fields", "Send `line_items` or `items`, not both.", "items")
    listed, field = (order_in.line_items, "line_items") if order_in.items is None else (order_in.items, "items")
    if order_in.amount is not None and listed is not None:
        raise ApiError(422, "amount_and_line_items", "Send either `amount` or `line_items`, never both.", "amount")
    if listed is not None and len(listed) > max_items:
        raise ApiError(422, "too_many_line_items", f"An order holds at most {max_items} line items.", field)
    if listed is not None:
        items = tuple(m.LineItem(i.name, i.quantity, _unit_amount(i, f"{field}[{n}]")) for n, i in enumerate(listed))
        total = sum(i.unit_amount * i.quantity for i in items)
        if total > order_limits.MAX_AMOUNT:
            raise ApiError(422, "amount_too_large",
                           f"The line items add up to more than {money.format(order_limits.MAX_AMOUNT)} USD.", field)
        return total, items
    if order_in.amount is None:
        raise ApiError(422, "missing_field", "Send `amount` or `line_items`.", "amount")
    return amount(order_in.amount, "amount"), ()


def _new_session(request: web.Request, ids: Ids, options, now: datetime) -> m.NewSession:
    mode = "live" if caller(request).livemode else "test"
    ttl = options.ttl_seconds or ctx(request).settings.session_ttl_s
    return m.NewSession(
        session_id=ids.make("cs", "session"),
        session_key=ids.make(f"cs_{mode}", "session_key", 24),
        expires_at=now + timedelta(seconds=ttl),
        success_url=options.success_url,
        cancel_url=options.cancel_url,
    )


async def create(request: web.Request, order_in: bodies.OrderIn, with_session: bool) -> OrderView:
    """The API's order creation for a decoded body; the merchant app's point of sale sells through it too."""
    owed, items = _owed(order_in, ctx(request).settings.max_line_items)
    ids, api_key, now = ids_of(request), caller(request), ctx(request).clock()
    order_id = ids.make("ord", "order")
    command = m.CreateOrder(
        order_id=order_id,
        merchant_id=api_key.merchant_id,
        livemode=api_key.livemode,
        at=now,
        amount=owed,
        line_items=items,
        external_ref=order_in.external_ref,
        metadata=order_in.metadata or {},
        session=_new_session(request, ids, order_in, now) if with_session else None,
        receipt_url=receipt_url(ctx(request).settings, ctx(request).derived.receipts, order_id),
        customer_email=order_in.customer_email,
    )
    return await submit(request, ids, command)


@audit_trail.records_nothing(audit_trail.ORDER_HISTORY)
async def quick_session(request: web.Request) -> web.Response:
    order = await create(request, await body(request, bodies.QuickSessionIn), with_session=True)
    return respond(session_created_answer(request, order), status=201)


@audit_trail.records_nothing(audit_trail.ORDER_HISTORY)
async def create_order(request: web.Request) -> web.Response:
    order = await create(request, await body(request, bodies.OrderIn), with_session=False)
    return respond(order_answer(request, order), status=201)


@audit_trail.records_nothing(audit_trail.ORDER_HISTORY)
async def open_session(request: web.Request) -> web.Response:
    session_in = await body(request, bodies.SessionIn)
    due = amount(session_in.amount_due, "amount_due") if session_in.amount_due is not None else None
    ids, api_key, now = ids_of(request), caller(request), ctx(request).clock()
    command = m.OpenSession(
        order_id=session_in.order_id, merchant_id=api_key.merchant_id, livemode=api_key.livemode, at=now,
        session=_new_session(request, ids, session_in, now), amount_due=due,
    )
    order = await submit(request, ids, command)
    return respond(session_created_answer(request, order), status=201)


@audit_trail.records_nothing(audit_trail.ORDER_HISTORY)
async def cancel_order(request: web.Request) -> web.Response:
    options = await body(request, bodies.OrderCancelIn)
    ids, api_key = ids_of(request), caller(request)
    command = m.CancelOrder(
        order_id=request.match_info["order_id"], merchant_id=api_key.merchant_id,
        livemode=api_key.livemode, at=ctx(request).clock(), note=options.reason,
    )
    order = await submit(request, ids, command)
    return respond(order_answer(request, order))


@audit_trail.records_nothing(audit_trail.ORDER_HISTORY)
async def reopen_order(request: web.Request) -> web.Response:
    options = await body(request, bodies.ReopenIn)
    ids, api_key, now = ids_of(request), caller(request), ctx(request).clock()
    command = m.ReopenOrder(
        order_id=request.match_info["order_id"], merchant_id=api_key.merchant_id, livemode=api_key.livemode,
        at=now, session=_new_session(request, ids, options, now),
    )
    order = await submit(request, ids, command)
    return respond(session_created_answer(request, order))


async def get_order(request: web.Request) -> web.Response:
    return respond(order_answer(request, await owned.order(request, request.match_info["order_id"])))


async def list_orders(request: web.Request) -> web.Response:
    page = Page(request, order_filters.NAMES)
    found, rows = await owned.orders(request, order_filters.parse(request.query), page.before, page.limit + 1)
    return respond(page.answer(ORDER_LIST, [order_answer(request, o) for o in found], rows,
                               lambda r: (r["created_at"], r["order_id"])))
