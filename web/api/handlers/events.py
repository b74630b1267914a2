"""Events as merchants read them, to catch up on missed deliveries: the same envelope webhooks carry."""

from __future__ import annotations

from aiohttp import web

from contract import api as contract
from web.api.answers import respond
from web.api.route import Route
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads.pagination import Page
from webhooks import events as event_log

EVENT_LIST = contract.page_of(contract.Event)


async def list_events(request: web.Request) -> web.Response:
    api_key = caller(request)
    page = Page(request, ("type", "order_id"))
    async with ctx(request).pool.acquire() as conn:
        listed = await event_log.page(conn, api_key.merchant_id, api_key.livemode, **page.filters,
                                      before=page.before, limit=page.limit + 1)
    return respond(page.answer(EVENT_LIST, [item.envelope for item in listed[: page.limit]], listed,
                               lambda item: (item.created_at, item.tiebreak)))


async def get_event(request: web.Request) -> web.Response:
    api_key = caller(request)
    async with ctx(request).pool.acquire() as conn:
        found = await event_log.find(conn, api_key.merchant_id, api_key.livemode, request.match_info["event_id"])
    if found is None:
        raise ApiError(404, "event_not_found", "No such event.", "event_id")
    return respond(found)


ROUTES = [
    Route("GET", "/events", list_events, "Events newest first, with cursor pagination; filter by type or order_id", response=EVENT_LIST),
    Route("GET", "/events/{event_id}", get_event, "Read one event: the envelope its webhooks carry", response=contract.Event),
]
