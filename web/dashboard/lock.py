"""The merchant app's quick lock: a PIN per user, set with the password; a locked session does nothing but unlock
or sign out, and the fifth wrong PIN signs it out."""

from __future__ import annotations

from aiohttp import web

from accounts import users
from accounts.roles import Can
from web.api import audit_trail, bodies
from web.dashboard import app_keys
from web.dashboard.guard import signed_in
from web.dashboard.signin import count_failure, wait_s
from web.edge import decoding, staff_sessions
from web.edge.app_state import ctx
from web.edge.errors import ApiError

MAX_PIN_FAILURES = 5


def _ok(**data) -> web.Response:
    return web.json_response(data, headers={"Cache-Control": "no-store"})


def _pin(pin: str) -> None:
    try:
        users.check_pin(pin)
    except users.UserError as exc:
        raise ApiError(422, "invalid_pin", f"The PIN {str(exc).removeprefix('the PIN ')}.", "pin") from None


@signed_in(Can.SIGN_OUT, json=True)
@audit_trail.records("pin.set")
async def set_pin(request: web.Request) -> web.Response:
    """The password is asked again, and counted against the sign-in limits: a session left open must not let
    anyone set a PIN, nor try passwords here that the sign-in form would have stopped."""
    c, staff = ctx(request), request[app_keys.STAFF]
    posted = decoding.decode(await request.read(), bodies.PinIn)
    _pin(posted.pin)
    ip = request.remote or "unknown"
    wait = await wait_s(c, staff.email, ip)
    if wait is not None:
        raise ApiError(429, "too_many_attempts", "Too many wrong passwords: try again later.", "password",
                       headers={"Retry-After": str(wait)})
    if await users.authenticate(c.pool, staff.email, posted.password) is None:
        await count_failure(c, staff.email, ip)
        raise ApiError(403, "password_wrong", "The password is wrong.", "password")
    await users.set_pin(c.pool, staff.user_id, posted.pin)
    await audit_trail.record(request, "pin.set", object_id=staff.user_id)
    return _ok(pin=True)


@signed_in(Can.SIGN_OUT, json=True)
@audit_trail.records_nothing(audit_trail.OWN_SESSION)
async def lock(request: web.Request) -> web.Response:
    c, staff = ctx(request), request[app_keys.STAFF]
    if not await users.has_pin(c.pool, staff.user_id):
        raise ApiError(409, "pin_not_set", "Set a PIN before locking: without one only a new sign-in would open it.")
    await staff_sessions.lock(c.pool, staff)
    return _ok(locked=True)


@signed_in(Can.SIGN_OUT, json=True, while_locked=True)
@audit_trail.records("pin.locked_out")
async def unlock(request: web.Request) -> web.Response:
    c, staff = ctx(request), request[app_keys.STAFF]
    pin = decoding.decode(await request.read(), bodies.UnlockIn).pin
    _pin(pin)
    if await users.pin_matches(c.pool, staff.user_id, pin):
        await staff_sessions.unlock(c.pool, staff)
        return _ok(locked=False)
    left = await staff_sessions.count_pin_failure(c.pool, staff, MAX_PIN_FAILURES)
    if left == 0:
        await audit_trail.record(request, "pin.locked_out", object_id=staff.user_id)
        raise ApiError(401, "signed_out", "Five wrong PINs: you are signed out. Sign in again with your password.")
    raise ApiError(403, "pin_wrong", f"The PIN is wrong: {left} tries left.", "pin", tries_left=left)
