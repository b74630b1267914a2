"""The merchant's team through the B2B API, and the team operations the dashboard's team page runs too: invite,
revoke an invitation, change a role, remove a user; each checked, done in the caller's transaction and recorded."""

from __future__ import annotations

import logging

import asyncpg
from aiohttp import web

from accounts import invitations, merchants, users
from accounts.invitations import Invitation
from common.clock import iso
from common.mail import Mailer, MailError
from contract import team as contract
from contract.api import page_of
from notify import store as notices
from web.api import audit_trail
from web.api.answers import respond
from web.api.bodies import InvitationIn, StaffRoleIn
from web.api.commands import body
from web.api.handlers.merchants import own_merchant_id
from web.api.modes import live_key_only
from web.api.route import Route
from web.edge import dashboard_site, idempotency, staff_sessions
from web.edge.app_state import ctx
from web.edge.errors import ApiError

log = logging.getLogger(__name__)
BASE = "/merchants/{merchant_id}/staff"
STAFF_LIST = page_of(contract.StaffMember)


def checked_role(role: str) -> str:
    if role not in users.ROLES:
        raise ApiError(422, "invalid_role", f"`role` must be one of {', '.join(users.ROLES)}.", "role")
    return role


def checked_email(email: str) -> str:
    email = users.normal_email(email)
    try:
        users.check_email(email)
    except users.UserError:
        raise ApiError(422, "invalid_email", "`email` is not an email address.", "email") from None
    return email


def member_json(member: users.Member) -> contract.StaffMember:
    return contract.StaffMember(user_id=member.user_id, email=member.email, role=member.role,
                                created_at=iso(member.created_at),
                                last_signed_in_at=iso(member.signed_in_at) if member.signed_in_at else None,
                                pin_set=member.pin)


def invitation_url(request: web.Request, token: str) -> str:
    return f"{dashboard_site.dashboard_url(ctx(request).settings)}/invite/{token}"


async def invite(request: web.Request, conn: asyncpg.Connection, merchant_id: str, email: str,
                 role: str) -> tuple[Invitation, str]:
    """A pending invitation and its link (shown once); mail it with `send` once the transaction committed."""
    email, role = checked_email(email), checked_role(role)
    try:
        invitation, token = await invitations.create(conn, merchant_id, email, role, audit_trail.actor(request).id,
                                                     ctx(request).clock())
    except invitations.OnTeam:  # this team's own member (its list shows them): another team's is invited alike
        raise ApiError(409, "already_on_team", "This address is on this team already.", "email") from None
    await audit_trail.record(request, "staff.invited", db=conn, object_id=invitation.invitation_id,
                             details={"email": email, "role": role})
    return invitation, invitation_url(request, token)


async def send(request: web.Request, invitation: Invitation, url: str) -> bool | None:
    """Mail the link when mail is configured: True when sent, False when the server failed (the link was shown,
    so nothing is lost), None without mail."""
    mailer = Mailer.configured(ctx(request).settings)
    if mailer is None:
        return None
    merchant = await merchants.get(ctx(request).pool, invitation.merchant_id)
    try:
        await mailer.send(invitations.mail(invitation, merchant.name if merchant else "", url))
    except MailError as exc:
        log.warning("invitation %s not mailed: %s", invitation.invitation_id, exc)
        return False
    return True


async def revoke(request: web.Request, conn: asyncpg.Connection, merchant_id: str, invitation_id: str) -> Invitation:
    try:
        invitation = await invitations.revoke(conn, merchant_id, invitation_id, ctx(request).clock())
    except invitations.NoSuchInvitation:
        raise ApiError(404, "invitation_not_found", "No such invitation.", "invitation_id") from None
    except invitations.Unusable as exc:
        raise ApiError(409, "invitation_not_pending", f"This invitation was {exc.state} already.",
                       "invitation_id") from None
    await audit_trail.record(request, "staff.invitation_revoked", db=conn, object_id=invitation_id,
                             details={"email": invitation.email, "role": invitation.role})
    return invitation


async def _changing(work):
    try:
        return await work
    except users.NoSuchUser:
        raise ApiError(404, "staff_member_not_found", "No such user on this team.", "user_id") from None
    except users.LastOwner as exc:
        raise ApiError(409, "last_owner", f"{str(exc)[0].upper()}{str(exc)[1:]}.", "user_id") from None


async def change_role(request: web.Request, conn: asyncpg.Connection, merchant_id: str, user_id: str,
                      role: str) -> users.Member:
    member, before = await _changing(users.change_role(conn, merchant_id, user_id, checked_role(role)))
    if before != member.role:
        await audit_trail.record(request, "staff.role_changed", db=conn, object_id=user_id,
                                 details={"email": member.email, "from": before, "to": member.role})
    return member


async def remove(request: web.Request, conn: asyncpg.Connection, merchant_id: str, user_id: str) -> users.Member:
    member = await _changing(users.remove(conn, merchant_id, user_id, ctx(request).clock()))
    await staff_sessions.end_all(conn, user_id)
    await notices.drop_for_removed(conn, user_id)
    await audit_trail.record(request, "staff.removed", db=conn, object_id=user_id,
                             details={"email": member.email, "role": member.role})
    return member


async def list_staff(request: web.Request) -> web.Response:
    team = await users.team(ctx(request).pool, own_merchant_id(request))
    return respond(STAFF_LIST(data=[member_json(m) for m in team], has_more=False))


@audit_trail.records("staff.invited")
async def create_invitation(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    wanted = await body(request, InvitationIn)
    made: list[tuple[Invitation, str]] = []

    async def work(conn) -> web.Response:
        made.append(await invite(request, conn, merchant_id, wanted.email, wanted.role))
        invitation, url = made[-1]
        return respond(contract.InvitationCreated(invitation_id=invitation.invitation_id, url=url,
                                                  expires_at=iso(invitation.expires_at)), status=201)

    response = await idempotency.once(request, work)
    if made and response.status == 201:
        await send(request, *made[-1])
    return response


@audit_trail.records("staff.invitation_revoked")
async def revoke_invitation(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        invitation = await revoke(request, conn, merchant_id, request.match_info["invitation_id"])
    return respond(contract.InvitationRevoked(invitation_id=invitation.invitation_id))


@audit_trail.records("staff.role_changed")
async def update_member(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    wanted = await body(request, StaffRoleIn)

    async def work(conn) -> web.Response:
        return respond(member_json(await change_role(request, conn, merchant_id, request.match_info["user_id"],
                                                     wanted.role)))

    return await idempotency.once(request, work)


@audit_trail.records("staff.removed")
async def remove_member(request: web.Request) -> web.Response:
    merchant_id = own_merchant_id(request)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        member = await remove(request, conn, merchant_id, request.match_info["user_id"])
    return respond(contract.StaffMemberRemoved(user_id=member.user_id))


# The team is both modes' (an owner invited here manages live money): a test key reaches none of it.
ROUTES = [route._replace(handler=live_key_only(route.handler)) for route in [
    Route("GET", BASE, list_staff, "The merchant's staff users: email, role, created, last sign-in, PIN set",
          response=STAFF_LIST),
    Route("POST", BASE + "/invitations", create_invitation,
          "Invite a person by email and role: a one-time dashboard link valid 72 hours, shown once (and mailed)",
          InvitationIn, 201, response=contract.InvitationCreated),
    Route("DELETE", BASE + "/invitations/{invitation_id}", revoke_invitation, "Revoke a pending invitation",
          response=contract.InvitationRevoked),
    Route("PATCH", BASE + "/{user_id}", update_member,
          "Change a staff user's role, at once for their open sessions; the last owner stays an owner",
          StaffRoleIn, response=contract.StaffMember),
    Route("DELETE", BASE + "/{user_id}", remove_member,
          "Remove a staff user: their sessions end at once; the last owner cannot be removed",
          response=contract.StaffMemberRemoved),
]]
