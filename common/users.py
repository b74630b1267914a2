"""Dashboard staff users: one merchant each, email, role, an argon2id password hash and an optional PIN's hash."""

from __future__ import annotations

import asyncio
import re

import asyncpg
import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from common.ids import random_id

ROLES = ("owner", "manager", "cashier")  # what each may do: web/dashboard/roles.py
MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # argon2 takes any length; this only bounds the work a sign-in form can ask for
_PIN = re.compile(r"^[0-9]{4,8}$")  # a quick lock, not a password: the session ends at the fifth wrong try
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")
_hasher = PasswordHasher()  # argon2-cffi's defaults: RFC 9106's low-memory argon2id profile
# Unknown emails are checked against this too, so a sign-in takes as long whether the account exists or not.
_DUMMY_HASH = _hasher.hash("no such user: this hash never matches a sign-in")


class UserError(ValueError):
    """A user that cannot be created, in words for the person at the command line."""


class StaffUser(msgspec.Struct, frozen=True):
    user_id: str
    merchant_id: str
    email: str
    role: str


def normal_email(email: str) -> str:
    return email.strip().lower()


def check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise UserError(f"the password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters long")


async def create(pool: asyncpg.Pool, merchant_id: str, email: str, password: str, role: str = "owner") -> StaffUser:
    email = normal_email(email)
    if role not in ROLES:
        raise UserError(f"the role must be one of {', '.join(ROLES)}, not {role!r}")
    if not _EMAIL.match(email) or len(email) > 254:
        raise UserError(f"{email!r} is not an email address")
    check_password(password)
    if await pool.fetchval("SELECT 1 FROM merchants WHERE merchant_id = $1", merchant_id) is None:
        raise UserError(f"no merchant {merchant_id}")
    password_hash = await asyncio.to_thread(_hasher.hash, password)
    user_id = random_id("usr")
    try:
        await pool.execute(
            "INSERT INTO staff_users (user_id, merchant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5)",
            user_id, merchant_id, email, password_hash, role,
        )
    except asyncpg.UniqueViolationError:
        raise UserError(f"a user with the email {email} exists already") from None
    return StaffUser(user_id, merchant_id, email, role)


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


async def authenticate(pool: asyncpg.Pool, email: str, password: str) -> StaffUser | None:
    """The user when the password matches; argon2 runs in a thread so the event loop keeps serving."""
    row = await pool.fetchrow("SELECT user_id, merchant_id, email, role, password_hash FROM staff_users"
                              " WHERE email = $1",
                              normal_email(email))
    ok = await asyncio.to_thread(_verify, row["password_hash"] if row else _DUMMY_HASH, password[:MAX_PASSWORD])
    if row is None or not ok:
        return None
    if _hasher.check_needs_rehash(row["password_hash"]):  # parameters raised since this hash was made
        await pool.execute("UPDATE staff_users SET password_hash = $2 WHERE user_id = $1", row["user_id"],
                           await asyncio.to_thread(_hasher.hash, password))
    return StaffUser(row["user_id"], row["merchant_id"], row["email"], row["role"])


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
