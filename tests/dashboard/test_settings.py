"""Settings: auto-approval, receive addresses validated per network, the API key rolled and shown once, webhook
endpoints with their recent deliveries and redelivery."""

from __future__ import annotations

from playwright.async_api import expect

from accounts import merchants
from tests.dashboard.support import sign_in
from tests.e2e.support import receive_addresses
from tests.integration.test_refunds_api import paid_order

ADDRESSES = receive_addresses("settings")


async def current(staff) -> dict:
    status, body = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/settings")
    assert status == 200
    return body


async def test_auto_approval_and_receive_addresses_are_saved_and_checked_per_network(page, staff):
    await sign_in(page, staff)
    await page.goto(staff.url("/settings"))
    await page.get_by_label("Approve refunds customers request").check()
    await page.get_by_role("button", name="Save", exact=True).click()
    await expect(page.get_by_test_id("flash")).to_have_text("Customer refund setting saved.")
    assert (await current(staff))["auto_approve_customer_refunds"] is True

    form = page.get_by_test_id("addresses")
    await form.get_by_label("Ethereum Sepolia").fill(ADDRESSES["sepolia"].lower())  # normalised to its checksum form
    await form.get_by_label("Solana Devnet").fill(ADDRESSES["solana-devnet"])
    await form.get_by_label("TRON Nile").fill("TnotAtronAddress")
    await form.get_by_role("button", name="Save addresses").click()
    form = page.get_by_test_id("addresses")
    await expect(form.get_by_role("alert")).to_contain_text("is not a valid tron-nile address")
    await expect(form.get_by_label("TRON Nile")).to_have_attribute("aria-invalid", "true")
    await expect(form.get_by_label("Solana Devnet")).to_have_value(ADDRESSES["solana-devnet"])  # kept for a retry
    assert (await current(staff))["receive_addresses"] == {}  # nothing saved while one field is wrong

    await form.get_by_label("TRON Nile").fill(ADDRESSES["tron-nile"])
    await form.get_by_role("button", name="Save addresses").click()
    await expect(page.get_by_test_id("flash")).to_have_text("Receive addresses saved.")
    saved = (await current(staff))["receive_addresses"]
    assert saved == {"sepolia": ADDRESSES["sepolia"], "solana-devnet": ADDRESSES["solana-devnet"],
                     "tron-nile": ADDRESSES["tron-nile"]}

    await page.get_by_test_id("addresses").get_by_label("Solana Devnet").fill("")
    await page.get_by_test_id("addresses").get_by_role("button", name="Save addresses").click()
    await expect(page.get_by_test_id("flash")).to_be_visible()
    assert set((await current(staff))["receive_addresses"]) == {"sepolia", "tron-nile"}


async def test_the_secret_key_is_rolled_and_shown_once(page, staff, stack):
    await sign_in(page, staff)
    await page.goto(staff.url("/settings"))
    await expect(page.get_by_test_id("public-key")).to_have_value(staff.client.public_key)
    page.once("dialog", lambda dialog: dialog.accept())  # "Roll the secret key?"
    await page.get_by_test_id("roll-key").click()
    secret = await page.get_by_test_id("secret-key").input_value()
    assert secret.startswith("sk_test_") and secret != staff.client.secret_key
    stored = await merchants.lookup_key(stack.pool, stack.vault, staff.client.public_key)
    assert stored.secret == secret
    await page.goto(staff.url("/settings"))
    assert await page.get_by_test_id("secret-key").count() == 0


async def test_webhook_deliveries_are_listed_and_redelivered(page, staff, stack):
    order_id = await paid_order(staff.client, "10.00")
    status, endpoint = await staff.client.post(f"/b2b/v1/merchants/{staff.merchant_id}/webhook-endpoints",
                                               {"url": "http://127.0.0.1:9/hooks", "description": "orders"})
    assert status == 201, endpoint
    event_id = await stack.pool.fetchval("SELECT event_id FROM events WHERE order_id = $1 ORDER BY seq LIMIT 1",
                                         order_id)
    status, made = await staff.client.post(
        f"/b2b/v1/merchants/{staff.merchant_id}/webhook-endpoints/{endpoint['id']}/redeliver", {"event_id": event_id})
    assert status == 202, made
    [delivery_id] = made["delivery_ids"]
    await stack.pool.execute("UPDATE webhook_deliveries SET status = 'failed' WHERE delivery_id = $1", delivery_id)

    await sign_in(page, staff)
    await page.goto(staff.url("/settings"))
    webhooks = page.get_by_test_id("webhooks")
    await expect(webhooks).to_contain_text("http://127.0.0.1:9/hooks")
    await expect(webhooks).to_contain_text(event_id)
    await webhooks.get_by_role("button", name=f"Redeliver order.created {event_id}").click()
    await expect(page.get_by_test_id("flash")).to_have_text(f"Event {event_id} queued for delivery again.")
    assert await stack.pool.fetchval("SELECT status FROM webhook_deliveries WHERE delivery_id = $1",
                                     delivery_id) == "pending"
