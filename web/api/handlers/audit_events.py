"""The audit log through the B2B API: newest first, paged like the other lists, filtered by actor, action and time."""

from __future__ import annotations

from aiohttp import web

from accounts import audit
from common.clock import iso
from contract import team as contract
from contract.api import page_of
from web.api.answers import respond
from web.api.handlers.merchants import own_merchant_id
from web.api.route import Route
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads.instants import instant
from web.reads.pagination import Page

AUDIT_LIST = page_of(contract.AuditEvent)
FILTERS = ("actor", "action", "created_gte", "created_lt")


def event_json(event: audit.AuditEvent) -> contract.AuditEvent:
    return contract.AuditEvent(
        audit_event_id=event.event_id, id=event.event_id, action=event.action,
        actor=contract.AuditActor(type=event.actor_type, actor_id=event.actor_id, id=event.actor_id,
                                  email=event.actor_email),
        object_id=event.object_id, order_id=event.order_id, livemode=event.livemode, details=event.details,
        client_ip=event.client_ip, user_agent=event.user_agent, request_id=event.request_id,
        created_at=iso(event.created_at))


def filters(sent: dict) -> dict:
    """The list's filters as accounts.audit.page takes them; an unknown action is refused naming `action`."""
    action = sent.get("action") or None
    if action is not None and action not in audit.ACTIONS:
        raise ApiError(422, "invalid_action", f"`action` must be one of {', '.join(audit.ACTIONS)}.", "action")
    return {"actor": (sent.get("actor") or None), "action": action,
            "created_gte": instant(sent.get("created_gte"), "created_gte"),
            "created_lt": instant(sent.get("created_lt"), "created_lt")}


async def list_audit_events(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    page = Page(request, FILTERS)
    found = await audit.page(ctx(request).pool, merchant_id, livemode=caller(request).livemode,
                             **filters(page.filters), before=page.before, limit=page.limit + 1)
    return respond(page.answer(AUDIT_LIST, [event_json(e) for e in found[: page.limit]], found,
                               lambda e: (e.created_at, e.event_id)))


ROUTES = [
    Route("GET", "/merchants/{merchant_id}/audit-events", list_audit_events,
          "The audit log, newest first, with cursor pagination; filter by actor, action, created_gte, created_lt",
          response=AUDIT_LIST),
]
