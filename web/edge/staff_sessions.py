"""Server-side dashboard sessions: a random id in an HttpOnly cookie, its hash and the CSRF token in PostgreSQL."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

import asyncpg
import msgspec
from aiohttp import web

from accounts import users
from accounts.users import StaffUser

COOKIE = "dash_session"
LIFETIME = timedelta(hours=12)  # a working day; then the user signs in again


class Session(msgspec.Struct, frozen=True, kw_only=True):
    session_hash: str
    user_id: str
    email: str
    merchant_id: str
    merchant_name: str
    role: str  # read with every request: a changed role applies at once, not at the next sign-in
    csrf_token: str
    locked: bool = False  # the quick lock: nothing but unlocking or signing out until the PIN is typed
    flash: str | None = None


def _hash(key: bytes, raw: str) -> str:
    """Keyed: a copy of the table alone cannot be matched against cookies."""
    return hmac.new(key, raw.encode(), hashlib.sha256).hexdigest()


async def start(pool: asyncpg.Pool, key: bytes, user: StaffUser, now: datetime, replacing: str | None = None,
                flash: str | None = None) -> str:
    """A new session for the user, with a message for its first page; returns the cookie value, which is never
    stored. `replacing`: the cookie the browser had, whoever's it was: that session ends with this one's start (a
    sign-in, an invitation accepted or another merchant chosen), so the old cookie, copied or not, opens nothing."""
    raw = secrets.token_urlsafe(32)
    async with pool.acquire() as conn, conn.transaction():
        if replacing and len(replacing) <= 100:
            await conn.execute("DELETE FROM dashboard_sessions WHERE session_hash = $1", _hash(key, replacing))
        await conn.execute("DELETE FROM dashboard_sessions WHERE user_id = $1 AND expires_at <= $2", user.user_id, now)
        await conn.execute(
            "INSERT INTO dashboard_sessions (session_hash, user_id, csrf_token, created_at, expires_at, flash)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            _hash(key, raw), user.user_id, secrets.token_urlsafe(32), now, now + LIFETIME, flash,
        )
        await users.mark_signed_in(conn, user.user_id, now)
    return raw


async def end_all(conn: asyncpg.Connection, user_id: str) -> None:
    """Every session of the user gone: their next request is signed out."""
    await conn.execute("DELETE FROM dashboard_sessions WHERE user_id = $1", user_id)


async def load(pool: asyncpg.Pool, key: bytes, raw: str | None, now: datetime) -> Session | None:
    if not raw or len(raw) > 100:
        return None
    row = await pool.fetchrow(
        "SELECT s.session_hash, s.user_id, u.email, u.merchant_id, m.name AS merchant_name, u.role, s.csrf_token, s.locked, s.flash"
        " FROM dashboard_sessions s JOIN staff_users u USING (user_id) JOIN merchants m USING (merchant_id)"
        " WHERE s.session_hash = $1 AND s.expires_at > $2 AND u.removed_at IS NULL",
        _hash(key, raw), now,
    )
    return Session(**dict(row)) if row else None


async def end(pool: asyncpg.Pool, session: Session) -> None:
    await pool.execute("DELETE FROM dashboard_sessions WHERE session_hash = $1", session.session_hash)


async def flash(pool: asyncpg.Pool, session: Session, message: str) -> None:
    """A message for the next page the user sees (after a redirect), shown once."""
    await pool.execute("UPDATE dashboard_sessions SET flash = $2 WHERE session_hash = $1",
                       session.session_hash, message)


async def take_flash(pool: asyncpg.Pool, session: Session) -> str | None:
    if session.flash is None:
        return None
    return await pool.fetchval("UPDATE dashboard_sessions SET flash = NULL WHERE session_hash = $1"
                               " AND flash IS NOT NULL RETURNING $2::text", session.session_hash, session.flash)


def set_cookie(response: web.StreamResponse, name: str, value: str, path: str, secure: bool,
               max_age: int | None = None) -> None:
    # Lax, not Strict: a link from an email to an order page must arrive signed in; forms carry a CSRF token.
    response.set_cookie(name, value, path=path, secure=secure, httponly=True, samesite="Lax", max_age=max_age)


async def lock(pool: asyncpg.Pool, session: Session) -> None:
    await pool.execute("UPDATE dashboard_sessions SET locked = true WHERE session_hash = $1", session.session_hash)


async def unlock(pool: asyncpg.Pool, session: Session) -> None:
    await pool.execute("UPDATE dashboard_sessions SET locked = false, pin_failures = 0 WHERE session_hash = $1",
                       session.session_hash)


async def count_pin_failure(pool: asyncpg.Pool, session: Session, limit: int) -> int:
    """Wrong tries left; at none the session is deleted (signed out), counted in one statement so that tries sent
    together cannot all slip under the limit."""
    failures = await pool.fetchval("UPDATE dashboard_sessions SET pin_failures = pin_failures + 1"
                                   " WHERE session_hash = $1 RETURNING pin_failures", session.session_hash)
    if failures is None or failures >= limit:
        await end(pool, session)
        return 0
    return limit - failures
