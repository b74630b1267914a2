"""The team page and invitation links over plain HTTP: owners only, a link that works once within 72 hours, role
changes and removals that reach open sessions, the last owner kept, hostile input shown as text, and the audit log
page with its filters and pages."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

from accounts import users
from tests.dashboard.support import Http, make_staff

_LINK = re.compile(r'id="invitation-url" value="([^"]+)"')


async def _signed_in(clients, user) -> Http:
    http = clients(user.dashboard)
    assert (await http.sign_in(user))[0] == 303
    return http


async def _invite(http: Http, email: str, role: str) -> tuple[int, str]:
    token = await http.csrf("/team")
    status, text, _ = await http.post("/team/invitations", {"csrf": token, "email": email, "role": role})
    return status, text


def _link(text: str) -> str:
    """The invitation's path under the dashboard, from the page that shows it once."""
    return urlsplit(html.unescape(_LINK.search(text).group(1))).path.removeprefix("/dashboard")


async def _accept(clients, dashboard: str, path: str, password: str = "a brand new password") -> tuple[int, str, str]:
    http = clients(dashboard)
    status, text = await http.get(path)
    if status != 200:
        return status, text, None
    token = re.search(r'name="csrf" value="([^"]+)"', text).group(1)
    return await http.post(path, {"csrf": token, "password": password, "password_again": password})


async def test_only_owners_open_the_team_and_audit_pages_and_their_actions(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    assert (await owner.get("/team"))[0] == 200
    assert (await owner.get("/audit"))[0] == 200
    target = (await users.find(stack.pool, (await make_staff(stack, staff.client, role="cashier")).email)).user_id
    for role in ("manager", "cashier"):
        user = await make_staff(stack, staff.client, role=role) if role == "manager" else \
            await _other_cashier(stack, staff)
        http = await _signed_in(clients, user)
        for path in ("/team", "/audit"):
            status, text = await http.get(path)
            assert status == 403 and f"{role}&#39;s account cannot do this" in text
        csrf = await stack.pool.fetchval("SELECT s.csrf_token FROM dashboard_sessions s JOIN staff_users u"
                                         " USING (user_id) WHERE u.email = $1", user.email)
        for path, data in (("/team/invitations", {"email": "x@example.com", "role": "owner"}),
                           (f"/team/{target}/role", {"role": "owner"}), (f"/team/{target}/remove", {})):
            assert (await http.post(path, {"csrf": csrf, **data}))[0] == 403
    assert (await users.find(stack.pool, f"cashier+{staff.merchant_id}@example.com")).role == "cashier"
    assert await stack.pool.fetchval("SELECT count(*) FROM staff_invitations WHERE merchant_id = $1",
                                     staff.merchant_id) == 0


async def _other_cashier(stack, staff):
    email = f"second-cashier+{staff.merchant_id}@example.com"
    await users.create(stack.pool, staff.merchant_id, email, staff.password, "cashier")
    return type(staff)(staff.client, email, staff.password, staff.dashboard)


async def test_an_invited_cashier_chooses_a_password_and_lands_in_the_app_once(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    status, text = await _invite(owner, "till@example.com", "cashier")
    assert status == 201 and "Mail is not set up" in text
    path = _link(text)
    assert path.startswith("/invite/inv_")
    assert "invitation-url" not in (await owner.get("/team"))[1]  # shown once
    assert "till@example.com" in (await owner.get("/team"))[1]  # pending
    status, _, location = await _accept(clients, staff.dashboard, path)
    assert (status, location) == (303, "/dashboard/app")
    made = await users.find(stack.pool, "till@example.com")
    assert (made.merchant_id, made.role) == (staff.merchant_id, "cashier")
    status, text, _ = await _accept(clients, staff.dashboard, path, "another password here")
    assert status == 410 and "was used already" in text
    assert await stack.pool.fetchval("SELECT count(*) FROM staff_users WHERE email = 'till@example.com'") == 1


async def test_a_revoked_or_expired_link_says_so_and_creates_nothing(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    revoked = _link((await _invite(owner, "gone@example.com", "manager"))[1])
    invitation_id = await stack.pool.fetchval("SELECT invitation_id FROM staff_invitations WHERE email = $1",
                                              "gone@example.com")
    token = await owner.csrf("/team")
    status, _, location = await owner.post(f"/team/invitations/{invitation_id}/revoke", {"csrf": token})
    assert (status, location) == (303, "/dashboard/team")
    assert "revoked" in (await owner.get("/team"))[1]
    status, text, _ = await _accept(clients, staff.dashboard, revoked)
    assert status == 410 and "was revoked" in text
    expired = _link((await _invite(owner, "late@example.com", "manager"))[1])
    stack.clock.advance(72 * 3600 + 1)
    status, text, _ = await _accept(clients, staff.dashboard, expired)
    assert status == 410 and "has expired" in text
    assert (await clients(staff.dashboard).get("/invite/inv_not_a_token"))[0] == 404
    for email in ("gone@example.com", "late@example.com"):
        assert await users.find(stack.pool, email) is None


async def test_a_short_or_mismatched_password_leaves_the_link_usable(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    path = _link((await _invite(owner, "careful@example.com", "manager"))[1])
    status, text, _ = await _accept(clients, staff.dashboard, path, "short")
    assert status == 422 and "10 to 1024 characters" in text
    status, _, location = await _accept(clients, staff.dashboard, path)
    assert (status, location) == (303, "/dashboard/test/orders")


async def test_hostile_input_is_shown_as_text_and_a_bad_role_is_refused_naming_it(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    status, text = await _invite(owner, "<script>alert(1)</script>@example.com", "cashier")
    assert status == 201
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;@example.com" in text
    status, text = await _invite(owner, "ok@example.com", "admin")
    assert status == 422 and 'id="role-error"' in text and "role must be one of owner, manager, cashier" in text
    assert await stack.pool.fetchval("SELECT count(*) FROM staff_invitations WHERE email = 'ok@example.com'") == 0
    assert "&lt;script&gt;" in (await owner.get("/audit"))[1]


async def test_role_change_and_removal_reach_open_sessions_and_the_last_owner_stays(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    manager = await make_staff(stack, staff.client, role="manager")
    theirs = await _signed_in(clients, manager)
    manager_id = (await users.find(stack.pool, manager.email)).user_id
    owner_id = (await users.find(stack.pool, staff.email)).user_id
    token = await owner.csrf("/team")
    status, _, location = await owner.post(f"/team/{manager_id}/role", {"csrf": token, "role": "cashier"})
    assert (status, location) == (303, "/dashboard/team")
    assert (await theirs.get("/test/orders"))[0] == 403
    status, text, _ = await owner.post(f"/team/{owner_id}/role", {"csrf": token, "role": "manager"})
    assert status == 409 and "is the last owner and cannot be demoted" in text
    status, text, _ = await owner.post(f"/team/{owner_id}/remove", {"csrf": token})
    assert status == 409 and "cannot be removed" in text
    status, _, _ = await owner.post(f"/team/{manager_id}/remove", {"csrf": token})
    assert status == 303
    status, _, location = await theirs.get("/app/me") + (None,)
    assert status == 401
    audit = (await owner.get("/audit?action=staff.removed"))[1]
    assert manager.email in audit and "staff.role_changed" not in audit.split("<tbody>")[1]


async def test_the_audit_page_lists_newest_first_filters_and_pages(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    for n in range(52):
        await stack.pool.execute(
            "INSERT INTO audit_events (event_id, merchant_id, actor_type, actor_id, action, created_at)"
            " VALUES ($1, $2, 'api_key', 'pk_test_x', 'api_key.rolled', now() - make_interval(days => $3 + 1))",
            f"aud_{n:03}", staff.merchant_id, n)
    status, text = await owner.get("/audit")
    rows = re.findall(r'data-testid="audit-action">([^<]+)<', text)
    assert status == 200 and rows[0] == "staff.signed_in" and len(rows) == 50
    older = html.unescape(re.search(r'href="/dashboard(/audit\?[^"]+)" data-testid="audit-older"', text).group(1))
    status, text = await owner.get(older)
    assert len(re.findall(r'data-testid="audit-action"', text)) == 3
    status, text = await owner.get("/audit?action=staff.signed_in")
    assert re.findall(r'data-testid="audit-action">([^<]+)<', text) == ["staff.signed_in"]
    status, text = await owner.get("/audit?action=staff.promoted")
    assert status == 422 and "action must be one of" in text
    status, text = await owner.get("/audit?actor=pk_test_x&from=2000-01-01&to=2000-01-02")
    assert status == 200 and "No events match these filters" in text


def _remove_buttons(page: str) -> dict[str, bool]:
    """Each member's email and whether their row offers an active Remove button."""
    rows = page.split('data-testid="member"')[1:]
    return {re.search(r'data-testid="member-email">([^<(]+)', row).group(1).strip(): 'data-testid="member-remove"' in row
            for row in rows}


async def test_the_only_owner_has_no_remove_button_and_two_owners_both_have_one(stack, staff, clients):
    owner = await _signed_in(clients, staff)
    manager = await make_staff(stack, staff.client, role="manager")
    page = (await owner.get("/team"))[1]
    assert _remove_buttons(page) == {staff.email: False, manager.email: True}
    assert 'data-testid="member-remove-locked">Only owner<' in page
    manager_id = (await users.find(stack.pool, manager.email)).user_id
    token = await owner.csrf("/team")
    assert (await owner.post(f"/team/{manager_id}/role", {"csrf": token, "role": "owner"}))[0] == 303
    page = (await owner.get("/team"))[1]
    assert _remove_buttons(page) == {staff.email: True, manager.email: True}
    assert "member-remove-locked" not in page
