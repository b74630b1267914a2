"""Opening an invitation link, {prefix}/invite/{token}: the invited person chooses a password, or types the one of
their account when the address has one (a member of another merchant), and lands signed in where their role works,
the session the browser had ended; a used, expired or revoked link says so and creates nothing. Wrong passwords
count against the address as sign-in's do."""

from __future__ import annotations

import secrets

from aiohttp import web

from accounts import invitations, merchants, users
from web.api import audit_trail
from web.dashboard import app_keys
from web.dashboard.guard import check_csrf
from web.dashboard.html import error_page, render
from web.dashboard.signin import SIGNIN_COOKIE, count_failure, signed_in_redirect, signin_token, wait_s
from web.edge import forms, staff_sessions
from web.edge.app_state import ctx
from web.edge.errors import ApiError

_GONE = {"used": "This invitation link was used already: sign in with the password chosen then.",
         "expired": "This invitation link has expired (links are valid 72 hours): ask an owner for a new one.",
         "revoked": "This invitation link was revoked: ask an owner for a new one."}


async def _form(request: web.Request, invitation: invitations.Invitation, nonce: str, code: int = 200,
                error: str | None = None) -> web.Response:
    merchant = await merchants.get(ctx(request).pool, invitation.merchant_id)
    response = render(request, "invite.html", code=code, invitation=invitation, error=error,
                      token=request.match_info["token"], signin_csrf=signin_token(request, nonce),
                      min_password=users.MIN_PASSWORD, merchant_name=merchant.name if merchant else "",
                      has_account=await users.has_account(ctx(request).pool, invitation.email))
    staff_sessions.set_cookie(response, SIGNIN_COOKIE, nonce, request.app[app_keys.PREFIX],
                              request.app[app_keys.SECURE])
    return response


async def _usable(request: web.Request) -> invitations.Invitation | web.Response:
    invitation = await invitations.find(ctx(request).pool, request.match_info["token"])
    if invitation is None:
        return error_page(request, 404, "This invitation link is not valid: check that it was copied whole.")
    state = invitation.state(ctx(request).clock())
    return invitation if state == "pending" else error_page(request, 410, _GONE[state])


async def invite_page(request: web.Request) -> web.Response:
    found = await _usable(request)
    if isinstance(found, web.Response):
        return found
    return await _form(request, found, request.cookies.get(SIGNIN_COOKIE) or secrets.token_urlsafe(24))


@audit_trail.records("staff.signed_in")
async def accept(request: web.Request) -> web.Response:
    found = await _usable(request)
    if isinstance(found, web.Response):
        return found
    c, nonce = ctx(request), request.cookies.get(SIGNIN_COOKIE, "")
    try:
        await check_csrf(request, signin_token(request, nonce) if nonce else secrets.token_hex(32))
    except ApiError as exc:
        return await _form(request, found, nonce or secrets.token_urlsafe(24), 403, exc.message)
    posted = await forms.fields(request)
    password, again = str(posted.get("password", "")), str(posted.get("password_again", ""))
    if password != again and not await users.has_account(c.pool, found.email):  # an account's own is typed once
        return await _form(request, found, nonce, 422, "The two passwords differ: type the same one twice.")
    ip = request.remote or "unknown"
    if await wait_s(c, found.email, ip) is not None:
        return await _form(request, found, nonce, 429, "Too many wrong passwords: try again in a few minutes.")
    try:
        async with c.pool.acquire() as conn:
            user = await invitations.accept(conn, request.match_info["token"], password, c.clock())
    except invitations.Unusable as exc:  # used or revoked a moment ago, in another tab
        return error_page(request, 410, _GONE[exc.state])
    except users.WrongPassword:
        await count_failure(c, found.email, ip)
        return await _form(request, found, nonce, 401, "This is not the password of your account.")
    except users.UserError as exc:
        return await _form(request, found, nonce, 422, f"{str(exc)[0].upper()}{str(exc)[1:]}.")
    raise await signed_in_redirect(request, user, None)
