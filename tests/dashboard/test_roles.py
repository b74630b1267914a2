"""Roles on the server: every screen and action of the dashboard answers by the user's role, a refused action
changes nothing, and users made before roles existed are owners."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import owner_transaction
from tests.dashboard.support import Http, make_staff
from tests.dashboard.test_access import actions, first_merchants_things, unchanged

SETTINGS_ACTIONS = [("/test/settings/refunds", {"auto_approve": "on"}), ("/test/settings/api-key", {}),
                    ("/test/settings/addresses", {"address.sepolia": ""}),
                    ("/test/settings/card/disconnect", {})]
# route -> (owner, manager, cashier): owner everything, manager all but configuration, cashier the counter only.
ROUTES = {
    "/test/orders": (200, 200, 403),
    "/test/orders/{order}": (200, 200, 403),
    "/test/orders/{order}/refund": (200, 200, 403),
    "/test/refunds/{refund}": (200, 200, 403),
    "/test/refunds/{pending}": (200, 200, 403),
    "/test/refunds/{refund}/progress": (200, 200, 403),
    "/test/refund-requests/{token}": (200, 200, 403),
    "/test/review": (200, 200, 403),
    "/test/settings": (200, 403, 403),
    "/team": (200, 403, 403),
    "/audit": (200, 403, 403),
    "/test/exports/orders": (200, 200, 403),
    "/test/exports/payments": (200, 200, 403),
    "/test/exports/refunds": (200, 200, 403),
    "/test/payment-links": (200, 200, 403),
    "/app/me": (200, 200, 200),
    "/test/app/sales?since={since}": (200, 200, 200),
    "/test/app/sales/{order}": (200, 200, 404),  # a sale made by the API, not by this cashier
}
TABLE = [(role, route, statuses[n]) for route, statuses in ROUTES.items()
         for n, role in enumerate(("owner", "manager", "cashier"))]


@pytest.mark.parametrize(("role", "route", "status"), TABLE)
async def test_role_and_route_to_status(stack, staff, signed_in_as, role, route, status):
    ids = await first_merchants_things(staff)
    http = await signed_in_as(staff, role)
    since = quote((datetime.now(timezone.utc) - timedelta(hours=1)).isoformat())
    assert (await http.get(route.format(since=since, **ids)))[0] == status


@pytest.mark.parametrize(("role", "settings_shown"), [("owner", True), ("manager", False)])
async def test_the_top_bar_offers_only_what_the_role_may_open(stack, staff, signed_in_as, role, settings_shown):
    http = await signed_in_as(staff, role)
    _, text = await http.get("/test/orders")
    assert ('href="/dashboard/test/settings"' in text) == settings_shown
    assert 'href="/dashboard/test/review"' in text and 'href="/dashboard/app"' in text


async def test_a_cashier_is_refused_every_refund_action_and_nothing_changes(stack, staff, signed_in_as):
    ids = await first_merchants_things(staff)
    http = await signed_in_as(staff, "cashier")
    assert (await http.get("/test/orders"))[0] == 403
    status, text = await http.get(f"/test/refunds/{ids['refund']}/progress")
    assert status == 403 and '"code":"role_forbidden"' in text.replace(" ", "")
    token = await _session_csrf(stack, "cashier", staff)
    for path, data in actions(ids) + [(f"/test/refunds/{ids['refund']}/retry", {})]:
        status, text, _ = await http.post(path, {"csrf": token, **data})
        assert status == 403 and "A cashier&#39;s account cannot do this." in text, (path, status, text[:300])
    await unchanged(staff, ids)


async def test_a_manager_changes_no_settings(stack, staff, signed_in_as):
    http = await signed_in_as(staff, "manager")
    before = (await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/settings"))[1]
    token = await _session_csrf(stack, "manager", staff)
    for path, data in SETTINGS_ACTIONS + [("/test/webhooks/we_none/redeliver", {"event_id": "evt_x"})]:
        status, _, _ = await http.post(path, {"csrf": token, **data})
        assert status == 403, path
    assert (await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/settings"))[1] == before
    assert (await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}"))[0] == 200  # the API key still works


async def _session_csrf(stack, role: str, staff) -> str:
    """The CSRF token of the role's newest session, read from its row: a refused role has no page to read it from."""
    return await stack.pool.fetchval(
        "SELECT s.csrf_token FROM dashboard_sessions s JOIN staff_users u USING (user_id)"
        " WHERE u.merchant_id = $1 AND u.role = $2 ORDER BY s.created_at DESC LIMIT 1", staff.merchant_id, role)


async def test_users_made_before_roles_are_owners(stack, merchant):
    migration = Path(__file__).resolve().parents[2] / "migrations" / "023_staff_roles_counter_sales_and_pin_locks.sql"
    async with owner_transaction(stack.settings.database_url) as conn:  # migrations are the schema owner's to run
        await conn.execute("DROP TABLE counter_sales; ALTER TABLE staff_users DROP COLUMN role, DROP COLUMN pin_hash;"
                           " ALTER TABLE dashboard_sessions DROP COLUMN locked, DROP COLUMN pin_failures")  # before 023
        await conn.execute("INSERT INTO staff_accounts (account_id, email, password_hash)"
                           " VALUES ('acc_old', 'old@example.com', 'x')")
        await conn.execute("INSERT INTO staff_users (user_id, account_id, merchant_id, email)"
                           " VALUES ('usr_old', 'acc_old', $1, 'old@example.com')", merchant.merchant_id)
        await conn.execute(migration.read_text())
        assert await conn.fetchval("SELECT role FROM staff_users WHERE user_id = 'usr_old'") == "owner"


@pytest.mark.parametrize(("role", "landing"), [("owner", "/dashboard/test/orders"),
                                               ("manager", "/dashboard/test/orders"), ("cashier", "/dashboard/app")])
async def test_each_role_lands_where_it_can_work(stack, staff, role, landing):
    user = staff if role == "owner" else await make_staff(stack, staff.client, role=role)
    http = Http(staff.dashboard)
    try:
        assert (await http.sign_in(user))[2] == landing
    finally:
        await http.close()
