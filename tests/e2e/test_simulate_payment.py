"""Test mode's "Simulate payment" on the hosted checkout page, in sight under the amount due, in Chromium: it pays the
order in full, in part or late, through the test helper's command; a live page never shows it and the server refuses
it there."""

from __future__ import annotations

from playwright.async_api import expect

from tests.integration.helpers import expire_due, order, until


async def _simulate(shop, amount: str) -> None:
    await shop.page.fill("[data-testid=simulate-form] [name=amount]", amount)
    async with shop.page.expect_navigation():
        await shop.page.click("[data-testid=simulate-pay]")


async def test_a_full_simulated_payment_makes_the_order_paid(shop):
    created = await shop.session()
    await shop.page.goto(shop.checkout_url(created["session_key"], locale="en"))
    # In sight as the page opens, nothing to unfold first: found by its name as a developer looks for it.
    button = shop.page.get_by_role("button", name="Simulate payment")
    await expect(button).to_be_visible()
    assert await button.evaluate("b => b.getBoundingClientRect().bottom <= innerHeight")
    assert await shop.page.get_by_label("Amount (USD)").input_value() == "10.00"
    async with shop.page.expect_navigation():
        await button.click()
    assert await shop.page.get_attribute("#status", "data-state") == "paid"
    assert await shop.page.locator("[data-testid=simulate]").count() == 0
    paid = await order(shop.client, created["order_id"])
    assert (paid["status"], paid["amount_paid"]) == ("PAID", "10.00")
    # Recorded as the watchers report a payment: on the page's first network, in a token it knows.
    [payment] = paid["payments"]
    assert payment["network"] == "sepolia" and payment["late"] is False


async def test_a_partial_then_the_residual(shop):
    created = await shop.session()
    await shop.page.goto(shop.checkout_url(created["session_key"], locale="en"))
    await _simulate(shop, "4.00")
    assert await shop.page.get_attribute("#status", "data-state") == "partially_paid"
    assert await shop.page.text_content("#amount-due") == "6.00"
    assert (await order(shop.client, created["order_id"]))["status"] == "PARTIAL_PAID"
    assert await shop.page.input_value("[data-testid=simulate-form] [name=amount]") == "6.00"
    await _simulate(shop, "6.00")
    assert (await order(shop.client, created["order_id"]))["status"] == "PAID"


async def test_a_late_payment_to_an_expired_checkout_is_recorded_late(shop):
    created = await shop.session(ttl_seconds=60)
    await expire_due(shop.stack, 61)
    await until(shop.client, created["order_id"], lambda o: o["status"] == "CANCELED")
    await shop.page.goto(shop.checkout_url(created["session_key"], locale="en"))
    await expect(shop.page.locator("[data-testid=simulate]")).to_contain_text("recorded late")
    await _simulate(shop, "10.00")
    late = await order(shop.client, created["order_id"])
    assert (late["status"], late["amount_paid"], late["payments"][0]["late"]) == ("CANCELED", "10.00", True)


async def test_a_bad_amount_is_refused_naming_the_field(shop):
    created = await shop.session()
    async with shop.stack.http.post(f"{shop.stack.base_url}/c/{created['session_key']}/simulated-payments",
                                    json={"amount": "ten"}) as resp:
        body = await resp.json()
    assert (resp.status, body["error"]["code"], body["error"]["param"]) == (422, "invalid_amount", "amount")
    assert (await order(shop.client, created["order_id"]))["status"] == "PENDING"


async def test_a_live_page_never_offers_it_and_the_server_refuses_it(shop):
    live = await shop.stack.other_mode(shop.client, livemode=True)
    status, created = await live.post("/b2b/v1/checkout-sessions/quick", {"amount": "10.00"})
    assert status == 201, created
    await shop.page.goto(shop.checkout_url(created["session_key"], locale="en"))
    await expect(shop.page.locator("#status")).to_have_attribute("data-state", "waiting")
    assert await shop.page.locator("[data-testid=simulate]").count() == 0
    assert await shop.page.locator("[data-testid=test-mode]").count() == 0
    async with shop.stack.http.post(f"{shop.stack.base_url}/c/{created['session_key']}/simulated-payments",
                                    json={"amount": "10.00"}) as resp:
        body = await resp.json()
    assert (resp.status, body["error"]["code"]) == (403, "test_mode_only")
    assert (await order(live, created["order_id"]))["amount_paid"] == "0.00"


async def test_another_origin_cannot_post_it(shop):
    created = await shop.session()
    async with shop.stack.http.post(f"{shop.stack.base_url}/c/{created['session_key']}/simulated-payments",
                                    json={"amount": "10.00"}, headers={"Origin": "https://evil.example"}) as resp:
        assert resp.status == 403
    assert (await order(shop.client, created["order_id"]))["status"] == "PENDING"


async def test_a_merchant_with_no_receive_address_is_told_how_to_add_one_and_can_still_simulate(shop):
    bare = await shop.stack.merchant("No addresses yet")
    status, created = await bare.post("/b2b/v1/checkout-sessions/quick", {"amount": "10.00"})
    assert status == 201, created
    await shop.page.goto(shop.checkout_url(created["session_key"], locale="en"))
    await expect(shop.page.locator("[data-testid=no-networks-hint]")).to_contain_text("receive_addresses")
    async with shop.page.expect_navigation():
        await shop.page.click("[data-testid=simulate-pay]")
    paid = await order(bare, created["order_id"])
    assert (paid["status"], paid["payments"][0]["network"]) == ("PAID", "sepolia")
