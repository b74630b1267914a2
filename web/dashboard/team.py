"""The team page at {prefix}/team, owners only: the merchant's users, pending invitations, and the forms that invite,
revoke, change a role and remove (the B2B API's own operations, web/api/handlers/staff.py)."""

from __future__ import annotations

from aiohttp import web

from accounts import invitations, users
from accounts.roles import Can
from web.api import audit_trail
from web.api.handlers import staff as staff_handlers
from web.dashboard import app_keys
from web.dashboard.guard import done, signed_in
from web.dashboard.html import problem, render
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.edge.forms import form


def _team(request: web.Request) -> str:
    return f"{request.app[app_keys.PREFIX]}/team"


async def page(request: web.Request, code: int = 200, error: ApiError | None = None, values: dict | None = None,
               invited: dict | None = None) -> web.Response:
    merchant_id, c = caller(request).merchant_id, ctx(request)
    return render(request, "team.html", code=code, error=problem(error), values=values or {}, invited=invited,
                  members=await users.team(c.pool, merchant_id), roles=users.ROLES,
                  pending=await invitations.pending(c.pool, merchant_id, c.clock()), me=request[app_keys.STAFF].user_id)


@signed_in(Can.MANAGE_TEAM)
async def team_page(request: web.Request) -> web.Response:
    return await page(request)


async def _change(request: web.Request, work, values: dict | None = None):
    """(work(conn, merchant_id) done in one transaction, None), or (None, the page with the refusal's message)."""
    try:
        async with ctx(request).pool.acquire() as conn, conn.transaction():
            return await work(conn, caller(request).merchant_id), None
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return None, await page(request, exc.status, exc, values)


@signed_in(Can.MANAGE_TEAM)
@audit_trail.records("staff.invited")
async def invite(request: web.Request) -> web.Response:
    """The link is shown in this answer only (the service keeps its hash), and mailed when mail is configured."""
    posted = await form(request)
    made, refused = await _change(request, lambda conn, merchant_id: staff_handlers.invite(
        request, conn, merchant_id, posted.get("email", ""), posted.get("role", "")), posted)
    if refused:
        return refused
    invitation, url = made
    mailed = await staff_handlers.send(request, invitation, url)
    return await page(request, 201, invited={"email": invitation.email, "role": invitation.role, "url": url,
                                             "expires_at": invitation.expires_at, "mailed": mailed})


@signed_in(Can.MANAGE_TEAM)
@audit_trail.records("staff.invitation_revoked")
async def revoke(request: web.Request) -> web.Response:
    await form(request)
    invitation, refused = await _change(request, lambda conn, merchant_id: staff_handlers.revoke(
        request, conn, merchant_id, request.match_info["invitation_id"]))
    if refused:
        return refused
    raise await done(request, _team(request), f"Invitation of {invitation.email} revoked: its link opens nothing.")


@signed_in(Can.MANAGE_TEAM)
@audit_trail.records("staff.role_changed")
async def change_role(request: web.Request) -> web.Response:
    posted = await form(request)
    member, refused = await _change(request, lambda conn, merchant_id: staff_handlers.change_role(
        request, conn, merchant_id, request.match_info["user_id"], posted.get("role", "")))
    if refused:
        return refused
    # An owner who made themselves a manager may no longer open this page: they go where their role works.
    gone = member.user_id == request[app_keys.STAFF].user_id and member.role != "owner"
    raise await done(request, f"{request.app[app_keys.PREFIX]}/signin" if gone else _team(request),
                     f"{member.email} is now a {member.role}.")


@signed_in(Can.MANAGE_TEAM)
@audit_trail.records("staff.removed")
async def remove(request: web.Request) -> web.Response:
    await form(request)
    member, refused = await _change(request, lambda conn, merchant_id: staff_handlers.remove(
        request, conn, merchant_id, request.match_info["user_id"]))
    if refused:
        return refused
    if member.user_id == request[app_keys.STAFF].user_id:  # an owner who removed themselves has no session left
        raise web.HTTPSeeOther(f"{request.app[app_keys.PREFIX]}/signin")
    raise await done(request, _team(request), f"{member.email} removed: signed out everywhere.")
