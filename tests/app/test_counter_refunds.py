"""Refunds at the counter: an order found by its note or the buyer's checkout QR, a refund link shown as a QR that
the buyer fills on their own phone, approved from the review queue; a cashier refused by the server."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from playwright.async_api import expect

from tests.app.test_counter import sign_in_at_the_counter
from tests.dashboard.support import decode_qr, execute_now, make_staff
from tests.dashboard.test_access import actions, first_merchants_things, unchanged
from tests.e2e.support import SEPOLIA_USDC, receive_addresses
from tests.e2e.test_refund_request import submit
from tests.integration.helpers import pay, quick


async def paid_sale(client, ref: str) -> dict:
    created = await quick(client, amount="10.00", external_ref=ref)
    assert (await pay(client, created["order_id"], "10.00"))[0] == 201
    return created


async def test_the_order_search_finds_a_buyers_checkout_link(stack, staff, http):
    created = await paid_sale(staff.client, "table 9")
    other = await paid_sale((await make_staff(stack, name="Other Shop")).client, "table 9")
    await http.sign_in(staff)
    for q in (created["checkout_url"], created["session_key"], f"{created['checkout_url']}?locale=ja", "table 9"):
        status, text = await http.get(f"/test/orders?q={quote(q)}")
        assert status == 200 and re.findall(r'data-order-id="([^"]+)"', text) == [created["order_id"]], q
    status, text = await http.get(f"/test/orders?q={quote(other['checkout_url'])}")
    assert status == 200 and 'data-testid="no-orders"' in text and other["order_id"] not in text


async def test_a_refund_link_as_a_qr_filled_by_the_buyer_then_approved_from_the_app(stack, phone, browser, staff,
                                                                                   screenshots):
    created = await paid_sale(staff.client, "table 9")
    manager = await make_staff(stack, staff.client, role="manager")
    # Desktop Linux Chromium has no share sheet; a phone's browser does. This one records what it was given.
    await phone.add_init_script("navigator.share = data => { window.shared = data; return Promise.resolve(); };")
    page = await phone.new_page()
    await sign_in_at_the_counter(page, manager, stack.base_url)
    await page.get_by_role("button", name="Refunds").tap()
    await page.get_by_label("Find an order").fill("table 9")
    await page.screenshot(path=screenshots / "app-phone-refunds.png", full_page=True)
    await page.get_by_role("button", name="Find", exact=True).tap()
    await page.locator(f'[data-order-id="{created["order_id"]}"] a').tap()
    await page.get_by_test_id("issue-refund").tap()
    dialog = page.get_by_test_id("refund-dialog")
    await dialog.get_by_text("Send the customer a link").tap()
    await dialog.get_by_label("Amount in USD").fill("10.00")
    await dialog.get_by_role("button", name="Create link").tap()
    await page.wait_for_url(re.compile(r".*/dashboard/test/refund-requests/rfqt_[A-Za-z0-9_-]+$"))
    await page.screenshot(path=screenshots / "app-phone-refund-link.png", full_page=True)
    refund_url = await decode_qr(page.get_by_test_id("refund-qr").locator("svg"))
    assert refund_url == await page.get_by_test_id("refund-url").input_value()
    await page.get_by_test_id("share").tap()
    assert await page.evaluate("window.shared") == {"url": refund_url}

    buyer_context = await browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        buyer = await buyer_context.new_page()
        await buyer.goto(stack.base_url + urlsplit(refund_url).path)  # what the buyer's camera opens
        await submit(buyer, receive_addresses("customer")["sepolia"])
    finally:
        await buyer_context.close()
    pending = await stack.pool.fetchval("SELECT refund_id FROM refunds WHERE order_id = $1 AND status = 'PENDING'",
                                        created["order_id"])
    assert pending is not None

    await page.goto(stack.base_url + "/dashboard/app")
    await page.get_by_role("button", name="Refunds").tap()
    await page.get_by_test_id("review").tap()
    await page.locator(f"[data-refund-id='{pending}']").get_by_role("button", name="Approve").tap()
    await expect(page.get_by_test_id("flash")).to_have_text(f"Refund {pending} approved.")
    await page.screenshot(path=screenshots / "app-phone-review.png", full_page=True)
    assert (await staff.client.get(f"/b2b/v1/refunds/{pending}"))[1]["status"] == "APPROVED"


async def test_a_cashier_is_refused_every_refund_action_by_the_server(stack, phone, staff):
    ids = await first_merchants_things(staff)
    cashier = await make_staff(stack, staff.client, role="cashier")
    page = await phone.new_page()
    await sign_in_at_the_counter(page, cashier, stack.base_url)
    await expect(page.get_by_role("button", name="Refunds")).to_be_hidden()
    csrf = (await (await page.request.get(stack.base_url + "/dashboard/app/me")).json())["csrf"]
    for path, data in actions(ids):  # the calls a hidden button would make, sent with the session anyway
        answer = await page.request.post(f"{stack.base_url}/dashboard{path}", form=data,
                                         headers={"X-CSRF-Token": csrf, "Origin": stack.base_url})
        assert answer.status == 403 and "A cashier&#39;s account cannot do this." in await answer.text(), path
    await unchanged(staff, ids)
    await page.goto(f"{stack.base_url}/dashboard/test/review")
    await expect(page.get_by_text("A cashier's account cannot do this.")).to_be_visible()


async def test_execute_now_from_the_counter_after_finding_the_order_by_its_checkout_qr(stack, phone, staff,
                                                                                      screenshots):
    created = await paid_sale(staff.client, "table 2")
    page = await phone.new_page()
    await sign_in_at_the_counter(page, staff, stack.base_url)
    await page.get_by_role("button", name="Refunds").tap()
    # A handheld scanner types what the buyer's checkout QR holds, as a keyboard would.
    await page.get_by_label("Find an order").fill(created["checkout_url"])
    await page.get_by_role("button", name="Find", exact=True).tap()
    await expect(page.locator("[data-order-id]")).to_have_count(1)
    await page.locator(f'[data-order-id="{created["order_id"]}"] a').tap()
    await page.get_by_test_id("issue-refund").tap()
    customer = receive_addresses("customer")["sepolia"]
    await execute_now(page.get_by_test_id("refund-dialog"), "4.00", f"sepolia|{SEPOLIA_USDC}", customer, "broken cup")
    await page.wait_for_url(re.compile(r".*/dashboard/test/refunds/re_[0-9a-f]+$"))
    await expect(page.get_by_test_id("send-address")).to_have_text(customer)
    await expect(page.get_by_test_id("send-amount")).to_have_value("4.00")
    await page.screenshot(path=screenshots / "app-phone-execution.png", full_page=True)
    refund = (await staff.client.get(f"/b2b/v1/refunds/{page.url.rsplit('/', 1)[1]}"))[1]
    assert (refund["status"], refund["amount"], refund["source"]) == ("APPROVED", "4.00", "merchant")
