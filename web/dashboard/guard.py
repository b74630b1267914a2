"""Every signed-in dashboard handler runs behind this: the session, CSRF, and the B2B caller identity it acts as."""

from __future__ import annotations

import functools
import hmac
from urllib.parse import urlencode

from aiohttp import web

from accounts import users
from accounts.audit import Actor
from accounts.merchants import ApiKey
from accounts.roles import Can, allows
from common import logs
from notify import store as notify_store
from web.api.audit_trail import STAFF_ACTOR
from web.dashboard import app_keys
from web.dashboard.html import error_page, problem
from web.edge import dashboard_site, forms, staff_sessions
from web.edge.app_state import CALLER, ctx
from web.edge.errors import ApiError

CSRF_HEADER = "X-CSRF-Token"
_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


async def check_csrf(request: web.Request, expected: str) -> None:
    """The form's token must be the session's (or the sign-in cookie's); a foreign Origin is refused outright."""
    origin = request.headers.get("Origin")
    if origin is not None and origin != dashboard_site.origin(ctx(request).settings, request):
        raise ApiError(403, "cross_origin_refused", "This form only accepts submissions from the dashboard itself.")
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.content_type in _FORMS:
        sent = (await forms.fields(request)).get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise ApiError(403, "csrf_token_invalid",
                       "This form is stale or was not sent by the dashboard: reload the page and try again.")


def signed_in(needs: Can, *, json: bool = False, while_locked: bool = False):
    """Wrap a handler: no session sends the browser to sign in; a role without `needs` is refused with 403, and a
    locked session (the app's PIN lock) with 423, before anything is read or written; the caller is the user's
    merchant in the URL's mode.

    `json` handlers (called by scripts) answer their refusals as the API does instead of as a page; `while_locked`
    ones (unlock, sign out, who is signed in) still answer a locked session.
    """
    if not isinstance(needs, Can):  # a bare @signed_in would wrap the handler as its own permission
        raise TypeError(f"signed_in needs a permission (a Can), not {needs!r}")
    return functools.partial(_guard, needs=needs, json=json, while_locked=while_locked)


def _guard(handler, *, needs: Can, json: bool, while_locked: bool):
    @functools.wraps(handler)
    async def guarded(request: web.Request) -> web.StreamResponse:
        c = ctx(request)
        session = await staff_sessions.load(c.pool, c.derived.dashboard_session,
                                            request.cookies.get(staff_sessions.COOKIE), c.clock())
        if session is None:
            if json:
                raise ApiError(401, "signed_out", "Sign in to the dashboard again.")
            # Back to the page after signing in; a form's action is no page to come back to.
            query = f"?{urlencode({'next': request.path_qs})}" if request.method == "GET" else ""
            raise web.HTTPSeeOther(f"{request.app[app_keys.PREFIX]}/signin{query}")
        request[app_keys.STAFF] = session
        logs.note(merchant_id=session.merchant_id)
        refusal = None
        if session.locked and not while_locked:
            refusal = ApiError(423, "session_locked", "This device is locked: unlock it with your PIN in the app.")
        elif not allows(session.role, needs):
            refusal = ApiError(403, "role_forbidden", f"A {session.role}'s account cannot do this.")
        if refusal is not None:
            if json:
                raise refusal
            return error_page(request, refusal.status, refusal.message)
        request[STAFF_ACTOR] = Actor("staff", session.user_id, session.email)
        request[CALLER] = ApiKey(public_key=f"dashboard:{session.user_id}", merchant_id=session.merchant_id,
                                 livemode=request.match_info.get("mode") == "live", secret="")
        try:
            if request.method != "GET":
                await check_csrf(request, session.csrf_token)
            elif not json:
                flash = await staff_sessions.take_flash(c.pool, session)
                if flash:
                    request[app_keys.FLASH] = flash
                request[app_keys.UNREAD] = await notify_store.unread(c.pool, session.user_id)
                request[app_keys.TEAMS] = await users.memberships(c.pool, session.user_id)
            return await handler(request)
        except ApiError as exc:
            if json:
                raise
            return error_page(request, exc.status, problem(exc)["message"])

    return guarded


async def done(request: web.Request, location: str, message: str) -> web.HTTPSeeOther:
    """After a change: a message for the next page and the redirect there (the raise is the caller's)."""
    await staff_sessions.flash(ctx(request).pool, request[app_keys.STAFF], message)
    return web.HTTPSeeOther(location)
