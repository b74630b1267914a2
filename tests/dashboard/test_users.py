"""`service users create`, the stored hash (argon2id, never the password), and what a session row keeps."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import sys

import pytest

from accounts import users
from web.dashboard.html import HEADERS
from web.edge.app_state import CONTEXT

CLI = [sys.executable, "-m", "service", "users", "create"]


async def run(stack, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    env = {**os.environ, "DATABASE_URL": stack.settings.database_url, "SERVICE_MASTER_KEY": stack.settings.master_key,
           "SERVICE_DATA_DIR": stack.settings.data_dir}
    process = await asyncio.create_subprocess_exec(*CLI, *args, env=env, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate(stdin.encode() if stdin else None)
    return process.returncode, out.decode(), err.decode()


async def test_the_cli_creates_a_user_that_can_sign_in(stack, merchant):
    code, out, err = await run(stack, "--merchant", merchant.merchant_id, "--email", "Owner@Example.com",
                               "--password", "a long enough password", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert (made["merchant_id"], made["email"]) == (merchant.merchant_id, "owner@example.com")
    stored = await stack.pool.fetchval("SELECT a.password_hash FROM staff_accounts a JOIN staff_users u USING (account_id)"
                                       " WHERE u.user_id = $1", made["user_id"])
    assert stored.startswith("$argon2id$") and "a long enough password" not in stored
    user = await users.authenticate(stack.pool, "OWNER@example.com ", "a long enough password")
    assert user is not None and user.merchant_id == merchant.merchant_id
    assert await users.authenticate(stack.pool, "owner@example.com", "a long enough passwore") is None


@pytest.mark.parametrize(("flags", "role"), [((), "owner"), (("--role", "manager"), "manager"),
                                             (("--role", "cashier"), "cashier")])
async def test_the_cli_gives_the_user_a_role(stack, merchant, flags, role):
    email = f"{role}@{merchant.merchant_id}.example.com"  # emails are unique across merchants
    code, out, err = await run(stack, "--merchant", merchant.merchant_id, "--email", email,
                               "--password", "a long enough password", "--json", *flags)
    assert code == 0, err
    assert json.loads(out)["role"] == role
    assert (await users.authenticate(stack.pool, email, "a long enough password")).role == role


async def test_the_cli_asks_for_the_password_when_it_is_not_given(stack, merchant):
    code, out, err = await run(stack, "--merchant", merchant.merchant_id, "--email", f"{merchant.merchant_id}@x.io",
                               stdin="typed in twice!\ntyped in twice!\n")
    assert code == 0, err
    assert await users.authenticate(stack.pool, f"{merchant.merchant_id}@x.io", "typed in twice!") is not None


@pytest.mark.parametrize(("email", "password", "why"), [
    ("taken@example.com", "a long enough password", "on this team already"),
    ("not-an-email", "a long enough password", "is not an email address"),
    ("short@example.com", "short", "10 to 1024 characters"),
])
async def test_the_cli_refuses_what_it_cannot_create(stack, merchant, email, password, why):
    if why == "on this team already":
        await users.create(stack.pool, merchant.merchant_id, email, password)
    code, _, err = await run(stack, "--merchant", merchant.merchant_id, "--email", email, "--password", password)
    assert code == 1 and why in err


async def test_the_cli_refuses_an_unknown_role(stack, merchant):
    code, _, err = await run(stack, "--merchant", merchant.merchant_id, "--email", "admin@example.com",
                             "--password", "a long enough password", "--role", "admin")
    assert code == 1 and "the role must be one of owner, manager, cashier, not 'admin'" in err
    assert await stack.pool.fetchval("SELECT count(*) FROM staff_users WHERE email = 'admin@example.com'") == 0


async def test_the_cli_refuses_an_unknown_merchant(stack):
    code, _, err = await run(stack, "--merchant", "mer_nope", "--email", "a@b.io", "--password", "long enough pw")
    assert code == 1 and "no merchant mer_nope" in err


async def test_a_session_row_keeps_the_cookies_hash_not_the_cookie(stack, staff, http):
    await http.sign_in(staff)
    [cookie] = [c for c in http.session.cookie_jar if c.key == "dash_session"]
    stored = await stack.pool.fetchval(
        "SELECT s.session_hash FROM dashboard_sessions s JOIN staff_users u USING (user_id) WHERE u.email = $1",
        staff.email)
    key = stack.server.app[CONTEXT].derived.dashboard_session
    assert stored == hmac.new(key, cookie.value.encode(), hashlib.sha256).hexdigest()
    assert cookie.value not in stored and stored != hashlib.sha256(cookie.value.encode()).hexdigest()


def test_dashboard_pages_forbid_framing_and_inline_scripts():
    csp = HEADERS["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "frame-ancestors *" not in csp
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert HEADERS["X-Frame-Options"] == "DENY" and HEADERS["Cache-Control"] == "no-store"
