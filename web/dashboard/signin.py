"""Sign in and out; failed sign-ins are counted per email and per IP in Redis, and refused past a limit."""

from __future__ import annotations

import hashlib
import hmac
import secrets

import asyncpg
from aiohttp import web

from accounts import users
from accounts.audit import Actor
from accounts.roles import Can, allows
from web.api import audit_trail
from web.dashboard import app_keys
from web.dashboard.guard import check_csrf, signed_in
from web.dashboard.html import render
from web.edge import forms, staff_sessions
from web.edge.app_state import Context, ctx
from web.edge.errors import ApiError

SIGNIN_COOKIE = "dash_signin"  # a nonce the sign-in form's CSRF token is bound to, before any session exists
WINDOW_S = 900
MAX_FAILURES_PER_EMAIL = 5  # guessing one account's password
MAX_FAILURES_PER_IP = 30  # one address trying many accounts; an office behind one NAT still gets through
_COUNT = """
local n = redis.call('incr', KEYS[1])
if n == 1 then redis.call('expire', KEYS[1], ARGV[1]) end
return n
"""


def _limits(c: Context, email: str, ip: str) -> list[tuple[str, int]]:
    return [(c.keys.signin_attempts_email(email), MAX_FAILURES_PER_EMAIL),
            (c.keys.signin_attempts_ip(ip), MAX_FAILURES_PER_IP)]


async def wait_s(c: Context, email: str, ip: str) -> int | None:
    """Seconds until sign-in is allowed again, or None when it is allowed now."""
    for key, limit in _limits(c, email, ip):
        count = await c.redis.get(key)
        if count is not None and int(count) >= limit:
            return max(await c.redis.ttl(key), 1)
    return None


async def count_failure(c: Context, email: str, ip: str) -> None:
    for key, _ in _limits(c, email, ip):  # one key a call: the two may sit in different Redis Cluster slots
        await c.redis.eval(_COUNT, 1, key, WINDOW_S)


def signin_token(request: web.Request, nonce: str) -> str:
    return hmac.new(ctx(request).derived.dashboard_signin, nonce.encode(), hashlib.sha256).hexdigest()


def _next(request: web.Request, wanted: str | None) -> str | None:
    """Only a path inside the dashboard: a sign-in link must never send anyone elsewhere."""
    prefix = request.app[app_keys.PREFIX]
    return wanted if wanted and wanted.startswith(prefix + "/") and "\\" not in wanted else None


async def landing_mode(pool: asyncpg.Pool, merchant_id: str) -> str:
    """Live mode for a merchant that has a live key, test mode otherwise."""
    live = await pool.fetchval("SELECT true FROM api_keys WHERE merchant_id = $1 AND livemode LIMIT 1", merchant_id)
    return "live" if live else "test"


async def _landing(request: web.Request, user: users.StaffUser | staff_sessions.Session) -> str:
    """The orders of the landing mode; a role that may not see them starts at the merchant app's counter."""
    if not allows(user.role, Can.SEE_ORDERS):
        return f"{request.app[app_keys.PREFIX]}/app"
    return f"{request.app[app_keys.PREFIX]}/{await landing_mode(ctx(request).pool, user.merchant_id)}/orders"


def _form(request: web.Request, nonce: str, code: int = 200, error: str | None = None, email: str = "",
          next_path: str | None = None) -> web.Response:
    response = render(request, "signin.html", code=code, error=error, email=email,
                      signin_csrf=signin_token(request, nonce), next_path=next_path or "")
    staff_sessions.set_cookie(response, SIGNIN_COOKIE, nonce, request.app[app_keys.PREFIX],
                              request.app[app_keys.SECURE])
    return response


async def signin_page(request: web.Request) -> web.Response:
    c = ctx(request)
    session = await staff_sessions.load(c.pool, c.derived.dashboard_session, request.cookies.get(staff_sessions.COOKIE),
                                        c.clock())
    if session is not None:
        wanted = _next(request, request.query.get("next"))
        raise web.HTTPSeeOther(wanted or await _landing(request, session))
    nonce = request.cookies.get(SIGNIN_COOKIE) or secrets.token_urlsafe(24)
    return _form(request, nonce, next_path=_next(request, request.query.get("next")))


@audit_trail.records("staff.signed_in", "staff.sign_in_failed")
async def signin(request: web.Request) -> web.Response:
    c = ctx(request)
    nonce = request.cookies.get(SIGNIN_COOKIE, "")
    try:
        await check_csrf(request, signin_token(request, nonce) if nonce else secrets.token_hex(32))
    except ApiError as exc:
        return _form(request, nonce or secrets.token_urlsafe(24), 403, exc.message)
    posted = await forms.fields(request)
    email = users.normal_email(str(posted.get("email", "")))[:320]
    password = str(posted.get("password", ""))
    next_path = _next(request, str(posted.get("next", "")))
    ip = request.remote or "unknown"
    wait = await wait_s(c, email, ip)
    if wait is not None:
        response = _form(request, nonce, 429, f"Too many failed sign-ins. Try again in {(wait + 59) // 60} minutes.",
                         email, next_path)
        response.headers["Retry-After"] = str(wait)
        return response
    user = await users.authenticate(c.pool, email, password) if email and password else None
    if user is None:
        await count_failure(c, email, ip)
        # An unknown address belongs to no merchant whose log could hold it; a known one is on each of its teams' logs.
        for tried in await users.memberships_of(c.pool, email) if email else []:
            await _record(request, tried, "staff.sign_in_failed")
        return _form(request, nonce, 401, "The email or the password is wrong.", email, next_path)
    await c.redis.delete(c.keys.signin_attempts_email(email))
    raise await signed_in_redirect(request, user, next_path)


async def _record(request: web.Request, user: users.StaffUser, action: str) -> None:
    await audit_trail.record(request, action, who=Actor("staff", user.user_id, user.email),
                             merchant_id=user.merchant_id, object_id=user.user_id)


async def signed_in_redirect(request: web.Request, user: users.StaffUser, next_path: str | None) -> web.HTTPSeeOther:
    """A new session for the user, recorded, and the redirect (with its cookie) to where they work; the session the
    browser had ends. A member of several merchants is told which one they are in."""
    c = ctx(request)
    teams = await users.memberships(c.pool, user.user_id)
    here = next(team for team in teams if team.user_id == user.user_id)
    flash = f"You are in {here.merchant_name} as {here.role}." if len(teams) > 1 else None
    raw = await staff_sessions.start(c.pool, c.derived.dashboard_session, user, c.clock(),
                                     replacing=request.cookies.get(staff_sessions.COOKIE), flash=flash)
    await _record(request, user, "staff.signed_in")
    redirect = web.HTTPSeeOther(next_path or await _landing(request, user))
    staff_sessions.set_cookie(redirect, staff_sessions.COOKIE, raw, request.app[app_keys.PREFIX],
                              request.app[app_keys.SECURE], max_age=int(staff_sessions.LIFETIME.total_seconds()))
    return redirect


@signed_in(Can.SIGN_OUT)
@audit_trail.records("staff.signed_in")
async def switch(request: web.Request) -> web.StreamResponse:
    """Into another of the person's memberships: a new session there, with its own role, and this one ended."""
    posted = await forms.fields(request)
    wanted = str(posted.get("user_id", ""))
    team = next((t for t in await users.memberships(ctx(request).pool, request[app_keys.STAFF].user_id)
                 if t.user_id == wanted), None)
    if team is None:
        raise ApiError(404, "membership_not_found", "You are not on that merchant's team.", "user_id")
    user = users.StaffUser(team.user_id, team.merchant_id, request[app_keys.STAFF].email, team.role)
    raise await signed_in_redirect(request, user, _next(request, str(posted.get("next", ""))))


@signed_in(Can.SIGN_OUT, while_locked=True)
@audit_trail.records_nothing(audit_trail.OWN_SESSION)
async def signout(request: web.Request) -> web.StreamResponse:
    await staff_sessions.end(ctx(request).pool, request[app_keys.STAFF])
    redirect = web.HTTPSeeOther(f"{request.app[app_keys.PREFIX]}/signin")
    redirect.del_cookie(staff_sessions.COOKIE, path=request.app[app_keys.PREFIX])
    raise redirect
