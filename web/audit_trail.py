"""Recording an action in the audit log from a request: who (the signed-in staff user, else the API key), from
where (address, user agent, request id); every call site of the dashboard and the B2B API goes through `record`."""

from __future__ import annotations

from aiohttp import web

from common import audit
from web import request_ids
from web.context import CALLER, ctx

# Set by the dashboard's guard for a signed-in user; a B2B request has none and its API key is the actor.
STAFF_ACTOR: web.RequestKey[audit.Actor] = web.RequestKey("staff_actor", audit.Actor)


def actor(request: web.Request) -> audit.Actor:
    return request.get(STAFF_ACTOR) or audit.Actor("api_key", request[CALLER].public_key)


def origin(request: web.Request) -> audit.Origin:
    return audit.Origin(client_ip=request.remote, user_agent=request.headers.get("User-Agent"),
                        request_id=request_ids.of(request))


async def record(request: web.Request, action: str, *, db=None, object_id: str | None = None,
                 order_id: str | None = None, details: dict | None = None, moded: bool = True,
                 who: audit.Actor | None = None, merchant_id: str | None = None) -> None:
    """`db` is the connection of the change's own transaction where there is one (the row commits with it);
    `moded` False for the team's actions, which belong to no mode; `who` and `merchant_id` for a request that has
    no caller yet (a sign-in)."""
    caller = request.get(CALLER)
    await audit.record(
        db or ctx(request).pool, merchant_id or caller.merchant_id, who or actor(request), action, ctx(request).clock(),
        origin(request), livemode=caller.livemode if moded and caller is not None else None, object_id=object_id,
        order_id=order_id, details=details)
