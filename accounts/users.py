"""Dashboard staff: accounts and memberships. An account is a person (an address and an argon2id password hash); a
user (a `staff_users` row, `user_id`) is one membership of one merchant, with its own role and optional PIN's hash.
One person may be a member of several merchants and switches between them (docs/dashboard.md).

The only module that writes `staff_users` and `staff_accounts`: the command line, sign-in, invitations and the team
page all come here.
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime

import asyncpg
import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from common.ids import random_id

ROLES = ("owner", "manager", "cashier")  # what each may do: accounts/roles.py
MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # argon2 takes any length; this only bounds the work a sign-in form can ask for
_PIN = re.compile(r"^[0-9]{4,8}$")  # a quick lock, not a password: the session ends at the fifth wrong try
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")
_hasher = PasswordHasher()  # argon2-cffi's defaults: RFC 9106's low-memory argon2id profile
# Unknown emails are checked against this too, so a sign-in takes as long whether the account exists or not.
_DUMMY_HASH = _hasher.hash("no such user: this hash never matches a sign-in")


class UserError(ValueError):
    """A user that cannot be created, in words for the person at the command line."""


class LastOwner(UserError):
    """The change would leave the merchant without an owner, and nobody could manage its team again."""


class WrongPassword(UserError):
    """The address has an account already, and this is not its password: joining another team takes that one."""


class NoSuchUser(UserError):
    """No user of this id on the merchant's team (another merchant's users are not found either)."""


class StaffUser(msgspec.Struct, frozen=True):
    user_id: str
    merchant_id: str
    email: str
    role: str


class Membership(msgspec.Struct, frozen=True, kw_only=True):
    """One of a person's teams, as the dashboard's merchant switcher lists them."""

    user_id: str
    merchant_id: str
    merchant_name: str
    role: str


class Member(msgspec.Struct, frozen=True, kw_only=True):
    """A user as the team page and the B2B staff list show them."""

    user_id: str
    email: str
    role: str
    created_at: datetime
    signed_in_at: datetime | None
    pin: bool


def normal_email(email: str) -> str:
    return email.strip().lower()


def check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise UserError(f"the password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters long")


def check_role(role: str) -> None:
    if role not in ROLES:
        raise UserError(f"the role must be one of {', '.join(ROLES)}, not {role!r}")


def check_email(email: str) -> None:
    """`email` already normal (normal_email)."""
    if not _EMAIL.match(email) or len(email) > 254:
        raise UserError(f"{email!r} is not an email address")


async def create(pool: asyncpg.Pool, merchant_id: str, email: str, password: str, role: str = "owner") -> StaffUser:
    email = normal_email(email)
    check_role(role)
    check_email(email)
    if await pool.fetchval("SELECT 1 FROM merchants WHERE merchant_id = $1", merchant_id) is None:
        raise UserError(f"no merchant {merchant_id}")
    async with pool.acquire() as conn, conn.transaction():
        return await join(conn, merchant_id, email, password, role)


async def _account(conn: asyncpg.Connection, email: str, password: str) -> str:
    """The account of this address, its password checked; a new one with this password when there is none."""
    row = await conn.fetchrow("SELECT account_id, password_hash FROM staff_accounts WHERE email = $1 FOR UPDATE", email)
    if row is not None:
        if not await asyncio.to_thread(_verify, row["password_hash"], password[:MAX_PASSWORD]):
            raise WrongPassword(f"{email} has an account already, and this is not its password")
        return row["account_id"]
    check_password(password)
    account_id = random_id("acc")
    password_hash = await asyncio.to_thread(_hasher.hash, password)
    try:
        async with conn.transaction():  # a savepoint: two first acceptances of one address at once make one account
            await conn.execute("INSERT INTO staff_accounts (account_id, email, password_hash) VALUES ($1, $2, $3)",
                               account_id, email, password_hash)
    except asyncpg.UniqueViolationError:
        raise UserError(f"an account with the email {email} was made a moment ago: try again") from None
    return account_id


async def join(conn: asyncpg.Connection, merchant_id: str, email: str, password: str, role: str) -> StaffUser:
    """A new membership of checked email and role: the person's account when the address has one (`password` must
    be its password), else a new account with this password. Call inside a transaction (an invitation's
    acceptance calls this in its own)."""
    account_id = await _account(conn, email, password)
    user_id = random_id("usr")
    try:
        async with conn.transaction():  # a savepoint inside the caller's: a taken membership leaves it usable
            await conn.execute(
                "INSERT INTO staff_users (user_id, account_id, merchant_id, email, role) VALUES ($1, $2, $3, $4, $5)",
                user_id, account_id, merchant_id, email, role,
            )
    except asyncpg.UniqueViolationError:
        raise UserError(f"{email} is on this team already") from None
    return StaffUser(user_id, merchant_id, email, role)


async def has_account(db, email: str) -> bool:
    return bool(await db.fetchval("SELECT true FROM staff_accounts WHERE email = $1", normal_email(email)))


async def mark_signed_in(conn: asyncpg.Connection, user_id: str, now: datetime) -> None:
    await conn.execute("UPDATE staff_users SET signed_in_at = $2 WHERE user_id = $1", user_id, now)


_CURRENT = ("SELECT user_id, merchant_id, email, role FROM staff_users WHERE removed_at IS NULL AND {}"
            " ORDER BY signed_in_at DESC NULLS LAST, created_at DESC")


async def find(pool: asyncpg.Pool, email: str) -> StaffUser | None:
    """The current membership of this address it last signed in with (the one a sign-in lands in)."""
    row = await pool.fetchrow(_CURRENT.format("email = $1") + " LIMIT 1", normal_email(email))
    return StaffUser(*row.values()) if row else None


async def memberships_of(pool: asyncpg.Pool, email: str) -> list[StaffUser]:
    """Every current membership of this address (a sign-in that failed is recorded on each merchant's log)."""
    return [StaffUser(*row.values()) for row in await pool.fetch(_CURRENT.format("email = $1"), normal_email(email))]


async def memberships(db, user_id: str) -> list[Membership]:
    """The current memberships of the person whose membership `user_id` is (it among them), by merchant name."""
    rows = await db.fetch(
        "SELECT m.user_id, m.merchant_id, x.name AS merchant_name, m.role FROM staff_users me"
        " JOIN staff_users m ON m.account_id = me.account_id AND m.removed_at IS NULL"
        " JOIN merchants x ON x.merchant_id = m.merchant_id WHERE me.user_id = $1 ORDER BY x.name, m.merchant_id",
        user_id)
    return [Membership(**dict(row)) for row in rows]


_MEMBER = "SELECT user_id, email, role, created_at, signed_in_at, pin_hash IS NOT NULL AS pin FROM staff_users"


async def team(db, merchant_id: str) -> list[Member]:
    """The merchant's users still on the team, owners first, then by address."""
    rows = await db.fetch(_MEMBER + " WHERE merchant_id = $1 AND removed_at IS NULL"
                          " ORDER BY array_position(ARRAY['owner', 'manager', 'cashier'], role), email", merchant_id)
    return [Member(**dict(row)) for row in rows]


async def _member_for_change(conn: asyncpg.Connection, merchant_id: str, user_id: str) -> Member:
    """The user, with the merchant's row locked: two owners demoting each other at once are decided one by one,
    so the last owner always stays."""
    await conn.execute("SELECT 1 FROM merchants WHERE merchant_id = $1 FOR UPDATE", merchant_id)
    row = await conn.fetchrow(_MEMBER + " WHERE merchant_id = $1 AND user_id = $2 AND removed_at IS NULL",
                              merchant_id, user_id)
    if row is None:
        raise NoSuchUser(f"no user {user_id} on this team")
    return Member(**dict(row))


async def _keep_an_owner(conn: asyncpg.Connection, merchant_id: str, member: Member, what: str) -> None:
    if member.role != "owner":
        return
    others = await conn.fetchval("SELECT count(*) FROM staff_users WHERE merchant_id = $1 AND role = 'owner'"
                                 " AND removed_at IS NULL AND user_id <> $2", merchant_id, member.user_id)
    if not others:
        raise LastOwner(f"{member.email} is the last owner and cannot be {what}: make another user an owner first")


async def change_role(conn: asyncpg.Connection, merchant_id: str, user_id: str, role: str) -> tuple[Member, str]:
    """The user with their new role, and the role they had; applies to open sessions at once (read per request).
    Call inside a transaction."""
    check_role(role)
    member = await _member_for_change(conn, merchant_id, user_id)
    if role != "owner":
        await _keep_an_owner(conn, merchant_id, member, "demoted")
    await conn.execute("UPDATE staff_users SET role = $2 WHERE user_id = $1", user_id, role)
    return msgspec.structs.replace(member, role=role), member.role


async def remove(conn: asyncpg.Connection, merchant_id: str, user_id: str, now: datetime) -> Member:
    """Off the team: the row kept for the sales and the audit log that name them, and no session of theirs loads
    from now on (web/edge/staff_sessions.py, which the caller also asks to end them). Call inside a transaction."""
    member = await _member_for_change(conn, merchant_id, user_id)
    await _keep_an_owner(conn, merchant_id, member, "removed")
    await conn.execute("UPDATE staff_users SET removed_at = $2, pin_hash = NULL WHERE user_id = $1", user_id, now)
    return member


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


async def authenticate(pool: asyncpg.Pool, email: str, password: str) -> StaffUser | None:
    """The membership the person lands in (the one last signed in with) when the password matches and they are on a
    team; argon2 runs in a thread so the event loop keeps serving."""
    row = await pool.fetchrow("SELECT account_id, password_hash FROM staff_accounts WHERE email = $1",
                              normal_email(email))
    ok = await asyncio.to_thread(_verify, row["password_hash"] if row else _DUMMY_HASH, password[:MAX_PASSWORD])
    if row is None or not ok:
        return None
    if _hasher.check_needs_rehash(row["password_hash"]):  # parameters raised since this hash was made
        await pool.execute("UPDATE staff_accounts SET password_hash = $2 WHERE account_id = $1", row["account_id"],
                           await asyncio.to_thread(_hasher.hash, password))
    found = await pool.fetchrow(_CURRENT.format("account_id = $1") + " LIMIT 1", row["account_id"])
    return StaffUser(*found.values()) if found else None


def check_pin(pin: str) -> None:
    if not _PIN.match(pin):
        raise UserError("the PIN must be 4 to 8 digits")


async def set_pin(pool: asyncpg.Pool, user_id: str, pin: str) -> None:
    """Hashed as the password is: ten thousand PINs of four digits are no secret once a hash is copied unkeyed."""
    check_pin(pin)
    await pool.execute("UPDATE staff_users SET pin_hash = $2 WHERE user_id = $1", user_id,
                       await asyncio.to_thread(_hasher.hash, pin))


async def pin_matches(pool: asyncpg.Pool, user_id: str, pin: str) -> bool:
    stored = await pool.fetchval("SELECT pin_hash FROM staff_users WHERE user_id = $1", user_id)
    return stored is not None and await asyncio.to_thread(_verify, stored, pin[:16])


async def has_pin(pool: asyncpg.Pool, user_id: str) -> bool:
    return bool(await pool.fetchval("SELECT pin_hash IS NOT NULL FROM staff_users WHERE user_id = $1", user_id))
