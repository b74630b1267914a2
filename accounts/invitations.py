"""Invitations to a merchant's team: a one-time link valid 72 hours; whoever opens it becomes a member of the invited
role, choosing a password, or typing their own when the address has an account already (a member of another
merchant). An invitation is made alike for either, so it tells nobody which addresses have accounts. Only the link's
SHA-256 is stored, so a copy of the table opens no account."""

from __future__ import annotations

import hashlib
import html
from datetime import datetime, timedelta

import asyncpg
import msgspec

from accounts import users
from common.ids import random_id, secret_token
from common.mail import Mail

TTL = timedelta(hours=72)


class Unusable(users.UserError):
    """The link was used, revoked or has expired: it creates nothing. `state` says which."""

    def __init__(self, state: str):
        super().__init__(f"this invitation was {state}")
        self.state = state


class NoSuchInvitation(users.UserError):
    pass


class OnTeam(users.UserError):
    """The address is a current member of the inviting merchant."""


class Invitation(msgspec.Struct, frozen=True, kw_only=True):
    invitation_id: str
    merchant_id: str
    email: str
    role: str
    invited_by: str
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None
    revoked_at: datetime | None

    def state(self, now: datetime) -> str:
        if self.accepted_at is not None:
            return "used"
        if self.revoked_at is not None:
            return "revoked"
        return "pending" if now < self.expires_at else "expired"


_COLUMNS = ", ".join(Invitation.__struct_fields__)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def create(conn: asyncpg.Connection, merchant_id: str, email: str, role: str, invited_by: str,
                 now: datetime) -> tuple[Invitation, str]:
    """A pending invitation and its token (returned once, never stored). The address must not be on this team
    already (which the team's own list shows); whether it is on another is nobody's business here."""
    email = users.normal_email(email)
    users.check_role(role)
    users.check_email(email)
    if await conn.fetchval("SELECT 1 FROM staff_users WHERE email = $1 AND merchant_id = $2 AND removed_at IS NULL",
                           email, merchant_id):
        raise OnTeam(f"{email} is on this team already")
    token = secret_token("inv", 32)
    row = await conn.fetchrow(
        "INSERT INTO staff_invitations (invitation_id, merchant_id, email, role, token_hash, invited_by, created_at,"
        f" expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {_COLUMNS}",
        random_id("inv"), merchant_id, email, role, token_hash(token), invited_by, now, now + TTL)
    return Invitation(**dict(row)), token


async def pending(db, merchant_id: str, now: datetime) -> list[Invitation]:
    rows = await db.fetch(f"SELECT {_COLUMNS} FROM staff_invitations WHERE merchant_id = $1 AND accepted_at IS NULL"
                          " AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at DESC", merchant_id, now)
    return [Invitation(**dict(row)) for row in rows]


async def revoke(conn: asyncpg.Connection, merchant_id: str, invitation_id: str, now: datetime) -> Invitation:
    """Revoked at once; a link already used or expired cannot be revoked (Unusable says which it is)."""
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM staff_invitations WHERE merchant_id = $1"
                              " AND invitation_id = $2 FOR UPDATE", merchant_id, invitation_id)
    if row is None:
        raise NoSuchInvitation(f"no invitation {invitation_id}")
    invitation = Invitation(**dict(row))
    if invitation.state(now) != "pending":
        raise Unusable(invitation.state(now))
    await conn.execute("UPDATE staff_invitations SET revoked_at = $2 WHERE invitation_id = $1", invitation_id, now)
    return msgspec.structs.replace(invitation, revoked_at=now)


async def find(db, token: str) -> Invitation | None:
    if not token or len(token) > 100:
        return None
    row = await db.fetchrow(f"SELECT {_COLUMNS} FROM staff_invitations WHERE token_hash = $1", token_hash(token))
    return Invitation(**dict(row)) if row else None


async def accept(conn: asyncpg.Connection, token: str, password: str, now: datetime) -> users.StaffUser:
    """The new membership (and account, for an address that had none); in one transaction with the invitation marked
    used, so two tabs opening the link make one membership and a refused password leaves the link usable."""
    async with conn.transaction():
        row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM staff_invitations WHERE token_hash = $1 FOR UPDATE",
                                  token_hash(token))
        if row is None:
            raise NoSuchInvitation("no such invitation")
        invitation = Invitation(**dict(row))
        if invitation.state(now) != "pending":
            raise Unusable(invitation.state(now))
        user = await users.join(conn, invitation.merchant_id, invitation.email, password, invitation.role)
        await conn.execute("UPDATE staff_invitations SET accepted_at = $2, user_id = $3 WHERE invitation_id = $1",
                           invitation.invitation_id, now, user.user_id)
    return user


def mail(invitation: Invitation, merchant_name: str, url: str) -> Mail:
    """The invitation as the invited person reads it; the merchant's name and the address are escaped for HTML."""
    until = invitation.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    text = (f"You are invited to join {merchant_name}'s team as {invitation.role}.\n\n"
            f"Open this link to join and sign in (valid until {until}, once):\n{url}\n\n"
            "If you did not expect this invitation, ignore this message.")
    name, link = html.escape(merchant_name), html.escape(url, quote=True)
    body = (f"<p>You are invited to join <strong>{name}</strong>'s team as {html.escape(invitation.role)}.</p>"
            f'<p><a href="{link}">Join and sign in</a> (valid until {until}, once).</p>'
            "<p>If you did not expect this invitation, ignore this message.</p>")
    return Mail(to=invitation.email, subject=f"Join {merchant_name} on the merchant dashboard", text=text, html=body)
