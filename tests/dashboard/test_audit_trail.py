"""Every recorded action, from the dashboard and the B2B API, lands in the audit log once with who did it, from where,
and what changed (never a secret); the order page shows who did each refund action on it."""

from __future__ import annotations

from tests.app.test_sales import post_json, signed_in
from tests.dashboard.support import PASSWORD, Http
from tests.integration.test_refunds_api import customer_refund, merchant_refund, paid_order

CARD = {"provider": "stripe", "secret_key": "sk_test_verysecret", "publishable_key": "pk_test_public",
        "webhook_secret": "whsec_alsosecret"}


async def _events(client, query: str = "") -> list[dict]:
    status, body = await client.get(f"/b2b/v1/merchants/{client.merchant_id}/audit-events?limit=100{query}")
    assert status == 200, body
    return body["data"]


async def _csrf(stack, email: str) -> str:
    return await stack.pool.fetchval("SELECT s.csrf_token FROM dashboard_sessions s JOIN staff_users u USING (user_id)"
                                     " WHERE u.email = $1 ORDER BY s.created_at DESC LIMIT 1", email)


async def test_refund_actions_name_who_did_them_from_the_api_and_the_dashboard(stack, staff):
    client = staff.client
    order_id = await paid_order(client, "10.00")
    by_api = (await merchant_refund(client, order_id, "1.00"))[1]["refund_id"]
    pending = [(await customer_refund(client, order_id, "1.00"))[1]["refund_id"] for _ in range(2)]
    status, link = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refund-requests",
                                     {"ref_type": "order_id", "ref_value": order_id, "amount": "1.00"})
    assert status == 201
    http = Http(staff.dashboard)
    try:
        await http.sign_in(staff)
        csrf = await _csrf(stack, staff.email)
        assert (await http.post(f"/test/refunds/{pending[0]}/approve", {"csrf": csrf}))[0] == 303
        assert (await http.post(f"/test/refunds/{pending[1]}/reject", {"csrf": csrf, "reason": "used"}))[0] == 303
        assert (await http.post(f"/test/refund-requests/{link['token']}/cancel", {"csrf": csrf}))[0] == 303
        status, _, location = await http.post(f"/test/orders/{order_id}/refund", {
            "csrf": csrf, "action": "execute", "amount": "1.00", "reason": "",
            "destination": "sepolia|0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
            "refund_to_address": "0x000000000000000000000000000000000000dEaD"})
        assert status == 303, location
        by_staff = location.rsplit("/", 1)[1]
        status, page = await http.get(f"/test/orders/{order_id}")
    finally:
        await http.close()
    assert (await client.post(f"/b2b/v1/refunds/{by_staff}/cancel", {}))[0] == 200

    done = {(e["action"], e["object_id"]): e for e in await _events(client)}
    api, owner = {"type": "api_key", "actor_id": client.public_key, "id": client.public_key, "email": None}, staff.email
    assert done[("refund.issued", by_api)]["actor"] == api
    assert done[("refund.issued", pending[0])]["details"]["flow"] == "customer"
    assert done[("refund_link.created", link["token"])]["actor"] == api
    assert done[("refund.approved", pending[0])]["actor"]["email"] == owner
    assert done[("refund.rejected", pending[1])]["details"] == {"reason": "used"}
    assert done[("refund.canceled", link["token"])]["actor"]["email"] == owner
    assert done[("refund.issued", by_staff)]["actor"]["email"] == owner
    assert done[("refund.canceled", by_staff)]["actor"] == api
    for event in done.values():
        assert event["order_id"] in (order_id, None) and event["request_id"]
        assert event["client_ip"] == "127.0.0.1"
        assert event["livemode"] is (False if event["action"].startswith("refund") else None)
    # The order page: each refund action and its author.
    rows = page.split('data-testid="order-actions"')[1].split("</table>")[0]
    for refund_id in (pending[0], pending[1], by_staff, by_api):
        assert refund_id in rows
    assert owner in rows and f"API key {client.public_key}" in rows


async def test_settings_key_and_card_changes_are_recorded_without_secrets(stack, staff):
    client = staff.client
    path = f"/b2b/v1/merchants/{client.merchant_id}/settings"
    # A test key changes test mode's own settings (auto-approval is both modes', the live key's to change).
    sepolia = {"receive_addresses": {"sepolia": "0x52908400098527886E0F7030069857D2E4169EE7"}}
    assert (await client.patch(path, {**sepolia, "card": CARD}))[0] == 200
    assert (await client.patch(path, sepolia))[0] == 200  # no change: no row
    http = Http(staff.dashboard)
    try:
        await http.sign_in(staff)
        csrf = await _csrf(stack, staff.email)
        assert (await http.post("/test/settings/refunds", {"csrf": csrf, "auto_approve": "on"}))[0] == 303
        status, text, _ = await http.post("/test/settings/api-key", {"csrf": csrf})
        assert status == 200
    finally:
        await http.close()
    events = await _events(client)
    changes = [e["details"]["changed"] for e in events if e["action"] == "settings.changed"]
    assert changes == [{"auto_approve_customer_refunds": True},
                       {"receive_addresses.sepolia": sepolia["receive_addresses"]["sepolia"]}]
    [card] = [e for e in events if e["action"] == "card_account.changed"]
    assert card["details"] == {"connected": True, "provider": "stripe", "publishable_key": "pk_test_public"}
    [rolled] = [e for e in events if e["action"] == "api_key.rolled"]
    assert rolled["actor"]["email"] == staff.email and rolled["object_id"].startswith("pk_test_")
    raw = str(await stack.pool.fetch("SELECT * FROM audit_events WHERE merchant_id = $1", client.merchant_id))
    assert "verysecret" not in raw and "alsosecret" not in raw


async def test_sign_ins_sales_and_a_pin_lockout_are_recorded(stack, staff):
    http = Http(staff.dashboard)
    assert (await http.sign_in(staff, "not the password"))[0] == 401
    await http.close()
    cashier, csrf = await signed_in(stack, staff, "cashier")
    try:
        status, sale = await post_json(cashier, "/test/app/sales", {"amount": "4.20"}, csrf)
        assert status == 201
        assert (await post_json(cashier, "/app/pin", {"password": PASSWORD, "pin": "2468"}, csrf))[0] == 200
        assert (await post_json(cashier, "/app/lock", {}, csrf))[0] == 200
        answers = [(await post_json(cashier, "/app/unlock", {"pin": "1111"}, csrf))[0] for _ in range(5)]
        assert answers[-1] == 401
    finally:
        await cashier.close()
    events = await _events(staff.client)
    by_action = {e["action"]: e for e in events}
    assert by_action["staff.sign_in_failed"]["actor"]["email"] == staff.email
    assert by_action["staff.signed_in"]["actor"]["email"].startswith("cashier+")
    assert by_action["sale.created"]["object_id"] == sale["order_id"]
    assert by_action["sale.created"]["details"] == {"amount": "4.20"}
    assert by_action["pin.locked_out"]["actor"]["email"].startswith("cashier+")
    assert by_action["pin.locked_out"]["livemode"] is None


async def test_every_kind_of_dashboard_change_is_recorded_naming_its_mode(stack, staff):
    """Webhook endpoints, payment links, exports, a revoked invitation, notification choices, a PIN and a key, each
    changed from the dashboard, are each one row naming the owner and the mode the page was in; the log page
    shows both modes' rows, each with its mode."""
    client = staff.client
    await paid_order(client, "2.00")
    _, listing = await client.get("/b2b/v1/events?limit=1")
    event_id = listing["data"][0]["id"]
    http = Http(staff.dashboard)
    try:
        await http.sign_in(staff)
        csrf = await _csrf(stack, staff.email)
        assert (await http.post("/test/webhooks", {"csrf": csrf, "url": "http://127.0.0.1:9/dash"}))[0] == 200
        _, hooks = await client.get(f"/b2b/v1/merchants/{client.merchant_id}/webhook-endpoints")
        [hook] = [h["id"] for h in hooks["data"]]
        for action in ("disable", "enable", "roll-secret", "test"):
            assert (await http.post(f"/test/webhooks/{hook}/{action}", {"csrf": csrf}))[0] in (200, 303), action
        assert (await http.post(f"/test/webhooks/{hook}/redeliver", {"csrf": csrf, "event_id": event_id}))[0] == 303
        assert (await http.post(f"/test/webhooks/{hook}/delete", {"csrf": csrf}))[0] == 303
        assert (await http.post("/live/payment-links", {"csrf": csrf, "name": "Scones", "amount": "4.00"}))[0] == 303
        link = await stack.pool.fetchval("SELECT payment_link_id FROM payment_links WHERE merchant_id = $1",
                                         client.merchant_id)
        for action in ("archive", "activate"):
            assert (await http.post(f"/live/payment-links/{link}/{action}", {"csrf": csrf}))[0] == 303
        assert (await http.get("/test/exports/payments?format=csv"))[0] == 200
        invited = f"invited+{client.merchant_id}@example.com"
        assert (await http.post("/team/invitations", {"csrf": csrf, "email": invited, "role": "manager"}))[0] == 201
        invitation = await stack.pool.fetchval("SELECT invitation_id FROM staff_invitations WHERE email = $1",
                                               invited)
        assert (await http.post(f"/team/invitations/{invitation}/revoke", {"csrf": csrf}))[0] == 303
        assert (await http.post("/test/notifications/choices", {"csrf": csrf}))[0] == 303
        assert (await post_json(http, "/app/pin", {"password": PASSWORD, "pin": "2468"}, csrf))[0] == 200
        assert (await http.post("/live/settings/api-key", {"csrf": csrf}))[0] == 200
        _, page = await http.get("/audit")
    finally:
        await http.close()

    user_id = await stack.pool.fetchval("SELECT user_id FROM staff_users WHERE email = $1", staff.email)
    owner = {"type": "staff", "actor_id": user_id, "id": user_id, "email": staff.email}
    live = await stack.other_mode(client, True)  # made after the dashboard's live key: a reader of the live mode
    found = {}
    for event in await _events(live):
        found.setdefault(event["action"], []).append(event)
    expected = {
        "webhook_endpoint.created": False, "webhook_endpoint.disabled": False, "webhook_endpoint.enabled": False,
        "webhook_endpoint.secret_rolled": False, "webhook_endpoint.test_sent": False,
        "webhook_endpoint.redelivered": False, "webhook_endpoint.deleted": False, "payment_link.created": True,
        "payment_link.archived": True, "payment_link.activated": True, "export.downloaded": False,
        "staff.invited": None, "staff.invitation_revoked": None, "notifications.changed": False, "pin.set": None,
        "api_key.created": True,
    }
    for action, mode in expected.items():
        [event] = found[action]
        assert (event["actor"], event["livemode"]) == (owner, mode), event
    assert found["export.downloaded"][0]["details"]["rows"] == 1
    assert found["webhook_endpoint.redelivered"][0]["details"] == {"event_id": event_id, "deliveries": 1}
    shown = page.split('data-testid="audit-mode">')[1:]
    assert {m.split("<")[0] for m in shown} == {"live", "test", "account"}
