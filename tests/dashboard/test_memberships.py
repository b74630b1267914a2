"""One person, several merchants: an invitation to an address with an account answers as any other, and joins with
that account's password; the member switches between merchants, each with its own role; removal ends one membership;
a new session ends the one it replaces (docs/dashboard.md, One person, several merchants)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.async_api import expect

from accounts import users
from tests.conftest import owner_transaction
from tests.dashboard.support import PASSWORD, SIZES, Http, make_staff
from web.edge import staff_sessions

MIGRATION = Path(__file__).resolve().parents[2] / "migrations" / "030_one_person_several_merchants.sql"


@pytest.fixture
async def two_shops(stack):
    """The owner of shop A, the manager of shop B (the person who will serve both), and A's live key."""
    owner_a = await make_staff(stack, name="Shop A")
    manager_b = await make_staff(stack, name="Shop B", role="manager")
    return owner_a, manager_b, await stack.other_mode(owner_a.client, livemode=True)


def _cookie(http: Http) -> str:
    return next(c.value for c in http.session.cookie_jar if c.key == staff_sessions.COOKIE)


async def _me_with(clients, dashboard: str, raw: str) -> int:
    """What /app/me answers a browser holding only this session cookie."""
    other = clients(dashboard)
    other.session.cookie_jar.update_cookies({staff_sessions.COOKIE: raw})
    return (await other.get("/app/me"))[0]


async def _invite(live, email: str, role: str) -> tuple[int, dict]:
    return await live.post(f"/b2b/v1/merchants/{live.merchant_id}/staff/invitations", {"email": email, "role": role})


async def _accept(http: Http, url: str, form: dict) -> tuple[int, str, str | None]:
    path = "/invite/" + url.rsplit("/invite/", 1)[1]
    status, page = await http.get(path)
    assert status == 200, page
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    return await http.post(path, {"csrf": csrf, **form})


def _shape(body: dict) -> dict:
    return {key: type(value).__name__ for key, value in body.items()}


async def test_inviting_a_member_of_another_merchant_answers_as_for_a_new_address(stack, two_shops):
    _, manager_b, live = two_shops
    known = await _invite(live, manager_b.email, "cashier")
    unknown = await _invite(live, f"nobody+{live.merchant_id}@example.com", "cashier")
    assert known[0] == unknown[0] == 201
    assert _shape(known[1]) == _shape(unknown[1]) and set(known[1]) == {"invitation_id", "url", "expires_at"}


async def test_a_member_of_another_merchant_joins_with_their_own_password(stack, two_shops, clients):
    owner_a, manager_b, live = two_shops
    _, invitation = await _invite(live, manager_b.email, "cashier")
    http = clients(owner_a.dashboard)
    path = "/invite/" + invitation["url"].rsplit("/invite/", 1)[1]
    page = (await http.get(path))[1]
    assert 'name="password_again"' not in page and "has an account already" in page  # no new password asked
    status, text, _ = await _accept(http, invitation["url"], {"password": "not the password at all"})
    assert status == 401 and "not the password of your account" in text
    assert len(await users.memberships_of(stack.pool, manager_b.email)) == 1  # nothing joined, the link still works
    status, _, location = await _accept(http, invitation["url"], {"password": PASSWORD})
    assert (status, location) == (303, "/dashboard/app")  # a cashier at shop A lands at the counter
    roles = {m.merchant_id: m.role for m in await users.memberships_of(stack.pool, manager_b.email)}
    assert roles == {owner_a.merchant_id: "cashier", manager_b.merchant_id: "manager"}
    me = json.loads((await http.get("/app/me"))[1])
    assert me["merchant_name"] == "Shop A" and me["role"] == "cashier"
    assert {(m["merchant_name"], m["role"], m["current"]) for m in me["merchants"]} == {
        ("Shop A", "cashier", True), ("Shop B", "manager", False)}


async def _member_of_both(stack, two_shops, clients) -> tuple[Http, str, str]:
    """The person signed in at shop A as cashier, with their membership ids at A and at B."""
    owner_a, manager_b, live = two_shops
    _, invitation = await _invite(live, manager_b.email, "cashier")
    http = clients(owner_a.dashboard)
    assert (await _accept(http, invitation["url"], {"password": PASSWORD}))[0] == 303
    ids = {m.merchant_id: m.user_id for m in await users.memberships_of(stack.pool, manager_b.email)}
    return http, ids[owner_a.merchant_id], ids[manager_b.merchant_id]


async def test_a_member_of_several_merchants_switches_each_with_its_own_role(stack, two_shops, clients):
    owner_a, manager_b, _ = two_shops
    http, at_a, at_b = await _member_of_both(stack, two_shops, clients)
    assert (await http.get("/test/orders"))[0] == 403  # a cashier at shop A
    before = _cookie(http)
    csrf = json.loads((await http.get("/app/me"))[1])["csrf"]
    status, _, location = await http.post("/switch", {"csrf": csrf, "user_id": at_b})
    assert (status, location) == (303, "/dashboard/test/orders")  # a manager at shop B sees orders
    status, page = await http.get("/test/orders")
    assert status == 200 and 'data-testid="merchant">Shop B<' in page
    assert 'data-testid="merchant-switch"' in page and "Shop A (cashier)" in page
    assert await _me_with(clients, owner_a.dashboard, before) == 401  # the session at shop A ended
    csrf = json.loads((await http.get("/app/me"))[1])["csrf"]
    owner_id = (await users.find(stack.pool, owner_a.email)).user_id  # someone else's membership: not theirs to use
    status, _, _ = await http.post("/switch", {"csrf": csrf, "user_id": owner_id})
    assert status == 404
    assert json.loads((await http.get("/app/me"))[1])["merchant_name"] == "Shop B"


async def test_signing_in_says_which_merchant_you_are_in(stack, two_shops, clients):
    owner_a, manager_b, _ = two_shops
    first, _, at_b = await _member_of_both(stack, two_shops, clients)
    csrf = json.loads((await first.get("/app/me"))[1])["csrf"]
    assert (await first.post("/switch", {"csrf": csrf, "user_id": at_b}))[0] == 303  # shop B is the last one used
    http = clients(owner_a.dashboard)
    status, _, location = await http.sign_in(manager_b)
    assert (status, location) == (303, "/dashboard/test/orders")  # where the last one used lands
    page = (await http.get("/test/orders"))[1]
    assert "You are in Shop B as manager." in page and 'data-testid="merchant">Shop B<' in page


async def test_removal_ends_one_membership_not_the_person(stack, two_shops, clients):
    owner_a, manager_b, live = two_shops
    http, at_a, _ = await _member_of_both(stack, two_shops, clients)
    status, _ = await live.call("DELETE", f"/b2b/v1/merchants/{owner_a.merchant_id}/staff/{at_a}")
    assert status == 200
    assert (await http.get("/app/me"))[0] == 401  # the session at shop A ended with the membership
    fresh = clients(owner_a.dashboard)
    status, _, location = await fresh.sign_in(manager_b)
    assert (status, location) == (303, "/dashboard/test/orders")
    me = json.loads((await fresh.get("/app/me"))[1])
    assert (me["merchant_name"], me["role"], len(me["merchants"])) == ("Shop B", "manager", 1)


async def test_accepting_an_invitation_ends_the_session_it_replaces(stack, two_shops, clients):
    owner_a, _, live = two_shops
    http = clients(owner_a.dashboard)
    assert (await http.sign_in(owner_a))[0] == 303
    owners_cookie = _cookie(http)
    _, invitation = await _invite(live, f"newcomer+{live.merchant_id}@example.com", "manager")
    status, _, _ = await _accept(http, invitation["url"], {"password": "a brand new password",
                                                           "password_again": "a brand new password"})
    assert status == 303 and _cookie(http) != owners_cookie
    assert await _me_with(clients, owner_a.dashboard, owners_cookie) == 401  # not valid for its 12 hours any more
    assert json.loads((await http.get("/app/me"))[1])["email"] == f"newcomer+{live.merchant_id}@example.com"


async def test_signing_in_again_ends_the_session_it_replaces(stack, two_shops, clients):
    owner_a, manager_b, _ = two_shops
    http = clients(owner_a.dashboard)
    token = await http.csrf("/signin")  # bound to the sign-in cookie, which outlives the session
    assert (await http.post("/signin", {"csrf": token, "email": owner_a.email, "password": PASSWORD}))[0] == 303
    first = _cookie(http)
    assert (await http.post("/signin", {"csrf": token, "email": manager_b.email, "password": PASSWORD}))[0] == 303
    assert await _me_with(clients, owner_a.dashboard, first) == 401


async def test_existing_users_are_carried_over_one_account_per_address(stack):
    """030 on rows as they were: an address removed at one merchant and current at another becomes one account
    with the current member's password; every row keeps its id and names that account."""
    a, b = await stack.merchant("Before A"), await stack.merchant("Before B")
    async with owner_transaction(stack.settings.database_url) as conn:  # a migration is the schema owner's to run
        await conn.execute(
            "DROP INDEX staff_users_membership; DROP INDEX staff_users_email;"
            " ALTER TABLE staff_users ADD COLUMN password_hash text, DROP COLUMN account_id;"
            " DROP TABLE staff_accounts; CREATE INDEX staff_users_email ON staff_users (email)"
            " WHERE removed_at IS NULL; UPDATE staff_users SET password_hash = 'h'")  # as before 030
        await conn.executemany(
            "INSERT INTO staff_users (user_id, merchant_id, email, password_hash, role, removed_at, created_at)"
            " VALUES ($1, $2, $3, $4, 'owner', $5, now() - $6 * interval '1 day')", [
                ("usr_gone", a.merchant_id, "moved@example.com", "old-hash", stack.clock(), 2),
                ("usr_here", b.merchant_id, "moved@example.com", "current-hash", None, 3),
                ("usr_solo", a.merchant_id, "solo@example.com", "solo-hash", None, 1)])
        await conn.execute(MIGRATION.read_text())
        rows = await conn.fetch("SELECT u.user_id, a.email, a.password_hash FROM staff_users u"
                                " JOIN staff_accounts a USING (account_id) WHERE u.user_id = ANY($1::text[])",
                                ["usr_gone", "usr_here", "usr_solo"])
        carried = {r["user_id"]: (r["email"], r["password_hash"]) for r in rows}
        assert carried == {"usr_gone": ("moved@example.com", "current-hash"),
                           "usr_here": ("moved@example.com", "current-hash"),
                           "usr_solo": ("solo@example.com", "solo-hash")}
        assert await conn.fetchval("SELECT count(DISTINCT account_id) FROM staff_users"
                                   " WHERE email = 'moved@example.com'") == 1


async def test_the_app_names_the_merchant_and_switches_to_another(stack, two_shops, clients, browser):
    owner_a, manager_b, _ = two_shops
    await _member_of_both(stack, two_shops, clients)  # shop A, as cashier, is the one used last
    context = await browser.new_context(viewport=SIZES["phone"], has_touch=True, is_mobile=True)
    try:
        page = await context.new_page()
        await page.goto(f"{owner_a.dashboard}/signin")
        await page.get_by_label("Email").fill(manager_b.email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page).to_have_url(f"{owner_a.dashboard}/app")  # a cashier at shop A: the counter
        await expect(page.get_by_test_id("merchant")).to_have_text("Shop A")
        switch = page.get_by_test_id("merchant-switch")
        await expect(switch).to_be_visible()
        await switch.get_by_role("combobox").select_option(label="Shop B (manager)")
        await switch.get_by_role("button").click()
        await expect(page).to_have_url(f"{owner_a.dashboard}/app")
        await expect(page.get_by_test_id("merchant")).to_have_text("Shop B")
    finally:
        await context.close()
