"""Recording an action in the audit log from a request: who (the signed-in staff user, else the API key), from
where (address, user agent, request id); every call site of the dashboard and the B2B API goes through `record`."""

from __future__ import annotations

from aiohttp import web

from accounts import audit
from web.edge import request_ids
from web.edge.app_state import CALLER, ctx

# Set by the dashboard's guard for a signed-in user; a B2B request has none and its API key is the actor.
STAFF_ACTOR: web.RequestKey[audit.Actor] = web.RequestKey("staff_actor", audit.Actor)


# Why a mutating route records no audit row of its own (records_nothing): the record its effect is kept in.
ORDER_HISTORY = "the order's own event history records it with the request id (GET /b2b/v1/events)"
TEST_HELPER = "test mode's stand-in for the chain: the order's events record the payment or transfer"
OWN_SESSION = "it ends or locks the signed-in person's own session, and changes nothing of the merchant's"
OWN_READING = "it marks the signed-in person's own notifications read"


def actor(request: web.Request) -> audit.Actor:
    return request.get(STAFF_ACTOR) or audit.Actor("api_key", request[CALLER].public_key)


def origin(request: web.Request) -> audit.Origin:
    return audit.Origin(client_ip=request.remote, user_agent=request.headers.get("User-Agent"),
                        request_id=request_ids.of(request))


def mode(request: web.Request) -> bool | None:
    """The mode the request acted in: its API key's, or the dashboard page's; None for a dashboard page of no mode
    (the team, the app's lock, signing in), whose actions belong to the merchant's account as a whole."""
    caller = request.get(CALLER)
    if caller is None or (STAFF_ACTOR in request and "mode" not in request.match_info):
        return None
    return caller.livemode


async def record(request: web.Request, action: str, *, db=None, object_id: str | None = None,
                 order_id: str | None = None, details: dict | None = None,
                 who: audit.Actor | None = None, merchant_id: str | None = None) -> None:
    """`db` is the connection of the change's own transaction where there is one (the row commits with it);
    `who` and `merchant_id` for a request that has no caller yet (a sign-in). The row names the request's mode,
    so a team change made with a test key says so."""
    await audit.record(
        db or ctx(request).pool, merchant_id or request[CALLER].merchant_id, who or actor(request), action,
        ctx(request).clock(), origin(request), livemode=mode(request), object_id=object_id, order_id=order_id,
        details=details)


def records(*actions: str):
    """Mark a mutating handler with the audit actions it records: tests/integration/test_audit_coverage.py walks
    the route table and fails on a mutating route whose handler carries no mark."""
    unknown = [a for a in actions if a not in audit.ACTIONS]
    if unknown or not actions:
        raise ValueError(f"unknown audit actions {unknown!r}")

    def mark(handler):
        handler.audit_actions = actions
        return handler

    return mark


def records_nothing(why: str):
    """Mark a mutating handler whose effect the audit log leaves to another record, saying which (docs/dashboard.md,
    The audit log)."""
    def mark(handler):
        handler.audit_exempt = why
        return handler

    return mark
