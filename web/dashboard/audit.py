"""The audit log page at {prefix}/audit, owners only: newest first, filtered by person, action and dates, paged."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from aiohttp import web

from accounts import audit
from accounts.roles import Can
from web.api.handlers.audit_events import filters
from web.dashboard.guard import signed_in
from web.dashboard.html import problem, render
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads.pagination import cursor as make_cursor
from web.reads.pagination import parse_cursor

PER_PAGE = 50
FIELDS = ("actor", "action", "from", "to")


def _filters(sent: dict) -> dict:
    """The form's dates are days: from its first moment, to the end of the `to` day."""
    wanted = filters({"actor": sent.get("actor"), "action": sent.get("action"),
                      "created_gte": sent.get("from"), "created_lt": sent.get("to")})
    if wanted["created_lt"] is not None and len(sent.get("to", "")) == 10:
        wanted["created_lt"] += timedelta(days=1)
    return wanted


@signed_in(Can.MANAGE_TEAM)
async def audit_page(request: web.Request) -> web.Response:
    merchant_id, pool = caller(request).merchant_id, ctx(request).pool
    sent = {name: request.query.get(name, "").strip() for name in FIELDS}
    error, found, older = None, [], None
    try:
        before = parse_cursor(request.query["cursor"]) if request.query.get("cursor") else None
        found = await audit.page(pool, merchant_id, **_filters(sent), before=before, limit=PER_PAGE + 1)
    except ApiError as exc:
        error = exc
    if len(found) > PER_PAGE:
        last = found[PER_PAGE - 1]
        older = "?" + urlencode({**{k: v for k, v in sent.items() if v},
                                 "cursor": make_cursor(last.created_at, last.event_id)})
    return render(request, "audit.html", code=error.status if error else 200, error=problem(error),
                  events=found[:PER_PAGE], older=older, sent=sent, actions=audit.ACTIONS,
                  people=await audit.actors(pool, merchant_id))
