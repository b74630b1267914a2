"""The Issue Refund dialog (docs/spec.md §1): execute now creates an APPROVED refund and opens its execution screen;
send link mints a dashboard token (24 h) whose URL is copied and shown as a QR code."""

from __future__ import annotations

import re
from datetime import datetime

from playwright.async_api import expect

from tests.dashboard.support import decode_qr, execute_now, last_part, open_dialog, sign_in
from tests.e2e.support import SEPOLIA_USDC, receive_addresses
from tests.integration.test_refunds_api import events, paid_order

CUSTOMER = receive_addresses("customer")["sepolia"]


async def test_execute_now_creates_an_approved_refund_and_opens_its_execution_screen(page, staff, stack):
    order_id = await paid_order(staff.client, "10.00")
    await sign_in(page, staff)
    dialog = await open_dialog(page, staff, order_id)
    await expect(dialog.get_by_text("At most 10.00 USD can be refunded.")).to_be_visible()
    await execute_now(dialog, "4.00", f"sepolia|{SEPOLIA_USDC}", CUSTOMER, "arrived damaged")
    await page.wait_for_url(re.compile(r".*/dashboard/test/refunds/re_[0-9a-f]+$"))

    refund = (await staff.client.get(f"/b2b/v1/refunds/{last_part(page.url)}"))[1]
    assert (refund["status"], refund["amount"], refund["reason"], refund["source"]) == (
        "APPROVED", "4.00", "arrived damaged", "merchant")
    assert (refund["refund_network"], refund["refund_to_address"], refund["refund_token_address"]) == (
        "sepolia", CUSTOMER, SEPOLIA_USDC)
    assert (await events(stack, order_id))[-2:] == ["payment.refund.requested", "payment.refund.approved"]
    await expect(page.get_by_test_id("flash")).to_contain_text("Refund created and approved")
    await expect(page.get_by_test_id("send-address")).to_have_text(CUSTOMER)
    await expect(page.get_by_test_id("send-amount")).to_have_value("4.00")


async def test_send_link_mints_a_dashboard_token_whose_copied_url_and_qr_are_the_refund_url(page, staff, stack):
    order_id = await paid_order(staff.client, "10.00")
    await sign_in(page, staff)
    dialog = await open_dialog(page, staff, order_id)
    await dialog.get_by_text("Send the customer a link").click()
    await expect(dialog.get_by_label("The customer's address")).to_be_hidden()  # the buyer chooses it on the form
    await dialog.get_by_label("Amount in USD").fill("6.00")
    await dialog.get_by_label("Reason").fill("goodwill")
    await dialog.get_by_role("button", name="Create link").click()
    await page.wait_for_url(re.compile(r".*/dashboard/test/refund-requests/rfqt_[A-Za-z0-9_-]+$"))

    minted = (await staff.client.get(f"/b2b/v1/refund-requests/{last_part(page.url)}"))[1]
    assert (minted["status"], minted["amount"], minted["source"], minted["metadata"]) == (
        "ACTIVE", "6.00", "dashboard", {"reason": "goodwill"})
    lifetime = datetime.fromisoformat(minted["expires_at"].replace("Z", "+00:00")) - stack.clock()
    assert 86390 <= lifetime.total_seconds() <= 86400  # docs/spec.md §8: 24 hours from the dashboard
    created = await stack.pool.fetchval("SELECT data->>'source' FROM events WHERE order_id = $1"
                                        " AND type = 'refund_request.created'", order_id)
    assert created == "dashboard"

    result = page.get_by_test_id("refund-link-result")
    await expect(result).to_be_visible()
    await result.get_by_role("button", name="Copy").click()
    await expect(result.get_by_text("Copied")).to_be_visible()
    assert await page.evaluate("navigator.clipboard.readText()") == minted["refund_url"]
    assert await page.get_by_test_id("refund-url").input_value() == minted["refund_url"]
    assert await decode_qr(page.get_by_test_id("refund-qr").locator("svg")) == minted["refund_url"]


async def test_an_amount_above_the_refundable_balance_is_refused_in_the_dialog(page, staff, stack):
    order_id = await paid_order(staff.client, "10.00")
    await sign_in(page, staff)
    dialog = await open_dialog(page, staff, order_id)
    await execute_now(dialog, "10.01", f"sepolia|{SEPOLIA_USDC}", CUSTOMER)
    dialog = page.get_by_test_id("refund-dialog")
    await expect(dialog.get_by_role("alert")).to_be_visible()  # the dialog is open again, with the refusal
    assert await dialog.get_by_label("Amount in USD").input_value() == "10.01"
    assert await dialog.get_by_label("The customer's address").input_value() == CUSTOMER
    assert await stack.pool.fetchval("SELECT count(*) FROM refunds WHERE order_id = $1", order_id) == 0


async def test_the_dialog_works_without_scripts(http, staff):
    order_id = await paid_order(staff.client, "10.00")
    await http.sign_in(staff)
    status, text = await http.get(f"/test/orders/{order_id}/refund")
    assert status == 200 and re.search(r"<dialog [^>]*\bopen data-open", text)
    csrf = await http.csrf(f"/test/orders/{order_id}")
    status, _, location = await http.post(f"/test/orders/{order_id}/refund", {
        "csrf": csrf, "action": "link", "amount": "2.50", "reason": "", "destination": "", "refund_to_address": ""})
    assert status == 303 and re.fullmatch(r"/dashboard/test/refund-requests/rfqt_[A-Za-z0-9_-]+", location)
    status, text = await http.get(location.removeprefix("/dashboard"))
    assert status == 200 and 'data-testid="refund-link-result"' in text and "<svg" in text
