"""After a paid sale the counter shows the buyer's receipt as a QR, and a Print action that opens it to print."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.app.test_counter import key_in, sign_in_at_the_counter
from tests.dashboard.support import SIZES, decode_qr, make_staff
from tests.integration.helpers import pay


@pytest.mark.parametrize("size", ["phone", "desktop"])
async def test_a_paid_sale_shows_the_receipt_qr_and_prints_it(stack, browser, shop_staff, screenshots, size):
    cashier = await make_staff(stack, shop_staff.client, role="cashier")
    context = await browser.new_context(viewport=SIZES[size], has_touch=True)
    try:
        page = await context.new_page()
        await sign_in_at_the_counter(page, cashier, stack.base_url)
        await key_in(page, "300")
        await page.get_by_test_id("charge").tap()
        await expect(page.get_by_test_id("sale-status")).to_have_text("Waiting for payment")
        await expect(page.get_by_test_id("sale-receipt")).to_be_hidden()  # nothing paid, no receipt yet
        order_id = await stack.pool.fetchval("SELECT order_id FROM counter_sales WHERE user_id ="
                                             " (SELECT user_id FROM staff_users WHERE email = $1)", cashier.email)
        assert (await pay(shop_staff.client, order_id, "3.00"))[0] == 201
        await expect(page.get_by_test_id("sale-status")).to_have_text("Paid", timeout=3000)
        await expect(page.get_by_test_id("sale-receipt")).to_be_visible()
        status, body = await shop_staff.client.get(f"/b2b/v1/orders/{order_id}")
        assert await decode_qr(page.get_by_test_id("receipt-qr")) == body["receipt_url"]
        await page.screenshot(path=screenshots / f"app-{size}-receipt.png", full_page=True)

        printing = page.get_by_test_id("receipt-print")
        await expect(printing).to_be_visible()
        assert await printing.get_attribute("href") == body["receipt_url"] + "?print=1"
        # What it opens (the checkout origin's address, which the test server answers under its own).
        receipt = await context.new_page()
        await receipt.add_init_script("window.print = () => { window.__printed = true; }")
        await receipt.goto(body["receipt_url"].replace(stack.settings.checkout_base(), stack.base_url) + "?print=1")
        await expect(receipt.get_by_test_id("receipt-paid")).to_have_text("3.00 USD")
        await receipt.wait_for_function("window.__printed === true")
    finally:
        await context.close()
