"""Signing in and out: the session cookie's flags, wrong passwords, the rate limit, and a browser signing in."""

from __future__ import annotations

import re

import pytest

from common.config import load
from tests.dashboard.support import sign_in
from web.dashboard import signin
from web.edge import dashboard_site


async def test_a_user_signs_in_in_the_browser_and_sees_the_orders_and_the_test_switch(page, staff):
    await sign_in(page, staff)
    assert await page.get_by_role("heading", name="Orders").is_visible()
    assert await page.get_by_test_id("test-banner").is_visible()
    switch = page.get_by_test_id("mode-switch")
    assert await switch.get_by_role("link", name="Test").get_attribute("aria-current") == "true"
    await switch.get_by_role("link", name="Live").click()
    await page.wait_for_url("**/dashboard/live/orders")
    assert not await page.get_by_test_id("test-banner").is_visible()
    await page.get_by_role("button", name="Sign out").click()
    await page.wait_for_url("**/dashboard/signin")
    await page.goto(staff.url("/orders"))
    await page.wait_for_url(re.compile(r".*/dashboard/signin\?next=.*"))  # the session is gone, not only the cookie


async def test_session_cookie_is_http_only_lax_and_not_secure_on_local_http(http, staff):
    status, _, location = await http.sign_in(staff)
    assert (status, location) == (303, "/dashboard/test/orders")
    [cookie] = [c for c in http.session.cookie_jar if c.key == "dash_session"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and not cookie["secure"]
    assert cookie["path"] == "/dashboard"


@pytest.mark.parametrize(("url", "secure", "prefix"), [
    ("", False, "/dashboard"),  # the default: http://127.0.0.1:PORT
    ("http://localhost:8080", False, "/dashboard"),
    ("http://dash.example.com", True, "/dashboard"),
    ("https://ops.example.com/admin/", True, "/admin"),
])
def test_cookies_are_secure_except_on_local_http_and_the_prefix_follows_the_url(url, secure, prefix):
    settings = load({}, dashboard_url=url, port=8080)
    assert (dashboard_site.secure_cookies(settings), dashboard_site.prefix(settings)) == (secure, prefix)


async def test_a_wrong_password_is_refused_without_saying_which_part_was_wrong(http, staff):
    status, text, _ = await http.sign_in(staff, "not the password")
    assert status == 401 and "The email or the password is wrong." in text
    status, text, _ = await http.post("/signin", {"csrf": await http.csrf("/signin"), "email": "nobody@example.com",
                                                  "password": staff.password})
    assert status == 401 and "The email or the password is wrong." in text


async def test_sign_in_is_rate_limited_per_email_even_with_the_right_password_then(http, staff):
    for _ in range(signin.MAX_FAILURES_PER_EMAIL):
        assert (await http.sign_in(staff, "guess"))[0] == 401
    status, text, _ = await http.sign_in(staff)
    assert status == 429 and "Too many failed sign-ins" in text


async def test_sign_in_is_rate_limited_per_address_across_emails(http, staff, redis, keys):
    await redis.set(keys.signin_attempts_ip("127.0.0.1"), signin.MAX_FAILURES_PER_IP, ex=60)
    try:
        status, text, _ = await http.sign_in(staff)
        assert status == 429
    finally:
        await redis.delete(keys.signin_attempts_ip("127.0.0.1"))


async def test_sign_in_form_needs_its_csrf_token(http, staff):
    await http.get("/signin")
    status, text, _ = await http.post("/signin", {"email": staff.email, "password": staff.password})
    assert status == 403 and "stale" in text
    status, _, _ = await http.post("/signin", {"csrf": "forged", "email": staff.email, "password": staff.password})
    assert status == 403


async def test_pages_need_a_session(http):
    status, _ = await http.get("/test/orders")
    assert status == 303
