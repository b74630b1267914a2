"""The merchant app in Chromium at a phone's width with touch: installable (manifest, icons, service worker), offline
said plainly with no money shown, and a sale from the keypad to Paid with the QR a buyer scans."""

from __future__ import annotations

import asyncio
import json
import re
import time
from urllib.parse import urlsplit

from playwright.async_api import Page, expect

from tests.dashboard.support import Staff, decode_qr, make_staff
from tests.integration.helpers import expire_due, pay

APP = "/dashboard/app"


async def sign_in_at_the_counter(page: Page, user: Staff, base_url: str) -> None:
    """From the app's own start: signed out, its sign-in link, back to the app."""
    await page.goto(base_url + APP)
    await expect(page.get_by_test_id("signed-out")).to_be_visible()
    await page.get_by_role("link", name="Sign in").tap()
    await page.get_by_label("Email").fill(user.email)
    await page.get_by_label("Password").fill(user.password)
    await page.get_by_role("button", name="Sign in").tap()
    await page.wait_for_url(re.compile(r".*/dashboard/app$"))
    await expect(page.get_by_test_id("who")).to_have_text(user.email)


async def key_in(page: Page, digits: str) -> None:
    for digit in digits:
        await page.locator(f'[data-key="{digit}"]').tap()


async def test_the_app_is_installable_and_says_when_it_is_offline(stack, phone, staff, screenshots):
    page = await phone.new_page()
    await sign_in_at_the_counter(page, staff, stack.base_url)
    href = await page.locator('link[rel="manifest"]').get_attribute("href")
    manifest = await page.request.get(stack.base_url + href)
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    fields = json.loads(await manifest.text())
    assert (fields["name"], fields["start_url"], fields["display"], fields["theme_color"]) == (
        "Counter", APP, "standalone", "#0f5132")
    assert fields["scope"] == "/dashboard/"  # the refund screens open inside the app
    for icon, size in zip(fields["icons"], (192, 512)):
        assert (icon["sizes"], icon["type"]) == (f"{size}x{size}", "image/png")
        loaded = await page.evaluate(
            "src => new Promise(ok => { const i = new Image(); i.onload = () => ok([i.naturalWidth, i.naturalHeight]);"
            " i.onerror = () => ok(null); i.src = src; })", icon["src"])
        assert loaded == [size, size], icon
    assert await page.evaluate("navigator.serviceWorker.ready.then(r => r.scope)") == stack.base_url + "/dashboard/"
    await page.reload()  # now under the worker's control, which keeps the shell as it passes
    await expect(page.get_by_test_id("sell")).to_be_visible()
    assert await page.evaluate("navigator.serviceWorker.controller !== null")
    sizes = await page.evaluate("[...document.querySelectorAll('button, a.button, input')]"
                                ".filter(e => e.offsetParent).map(e => [e.offsetWidth, e.offsetHeight])")
    assert sizes and all(w >= 44 and h >= 44 for w, h in sizes), sizes
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing runs off a phone's screen
    await page.screenshot(path=screenshots / "app-phone-keypad.png", full_page=True)

    await phone.set_offline(True)
    shell = await page.reload()
    assert shell.from_service_worker  # the page came from the worker's cache, not the network
    await expect(page.get_by_test_id("offline")).to_have_text(
        "Offline: no connection. Amounts and statuses are hidden until it is back.")
    for money in ("sell", "checkout", "sales"):
        await expect(page.get_by_test_id(money)).to_be_hidden()
    await page.screenshot(path=screenshots / "app-phone-offline.png", full_page=True)
    await phone.set_offline(False)


async def test_a_sale_from_the_keypad_to_paid_with_the_qr_a_buyer_opens(stack, phone, browser, shop_staff,
                                                                          screenshots):
    cashier = await make_staff(stack, shop_staff.client, role="cashier")
    page = await phone.new_page()
    await sign_in_at_the_counter(page, cashier, stack.base_url)
    await key_in(page, "12500")
    await page.locator('[data-key="back"]').tap()
    await expect(page.get_by_test_id("amount")).to_have_text("12.50")
    await page.get_by_label("Note (optional)").fill("table 4")
    await page.get_by_test_id("charge").tap()

    await expect(page.get_by_test_id("sale-status")).to_have_text("Waiting for payment")
    await expect(page.get_by_test_id("networks")).to_have_text(
        "Accepted: Ethereum Sepolia, Base Sepolia, Solana Devnet, TRON Nile, TON Testnet")
    box = await page.get_by_test_id("sale-qr").bounding_box()
    assert box["width"] >= 300  # large enough for a buyer's camera across the counter
    await page.screenshot(path=screenshots / "app-phone-sale-qr.png", full_page=True)
    checkout = await decode_qr(page.get_by_test_id("sale-qr"))
    path = urlsplit(checkout).path
    assert path.startswith("/c/cs_test_")

    buyer_context = await browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        buyer = await buyer_context.new_page()
        await buyer.goto(stack.base_url + path)  # what the buyer's camera opens
        await expect(buyer.get_by_test_id("amount-due")).to_have_text("12.50 USD")

        order_id = await stack.pool.fetchval("SELECT order_id FROM counter_sales WHERE user_id ="
                                             " (SELECT user_id FROM staff_users WHERE email = $1)", cashier.email)
        assert (await pay(shop_staff.client, order_id, "5.00"))[0] == 201
        await expect(page.get_by_test_id("sale-status")).to_have_text("Underpaid: 7.50 USD still due", timeout=2000)
        assert (await pay(shop_staff.client, order_id, "7.50"))[0] == 201
        paid_at = time.monotonic()
        await expect(page.get_by_test_id("sale-status")).to_have_text("Paid", timeout=2000)
        assert time.monotonic() - paid_at < 2
        await expect(page.get_by_test_id("sale-qr")).to_be_hidden()  # nothing left to pay: no QR to invite it
        await page.screenshot(path=screenshots / "app-phone-paid.png", full_page=True)
        await expect(buyer.get_by_test_id("status")).to_contain_text("Payment received")
    finally:
        await buyer_context.close()

    await page.get_by_role("button", name="Today's sales").tap()
    await expect(page.get_by_test_id("totals")).to_have_text("Sales today: 1, paid 12.50 USD")
    await expect(page.locator(f'[data-order-id="{order_id}"]')).to_have_text("#1001 · 12.50 USD · Paid · table 4")
    await page.screenshot(path=screenshots / "app-phone-sales.png", full_page=True)


async def test_the_pin_lock_hides_the_counter_until_the_pin_and_signs_out_at_the_fifth_wrong_one(stack, phone, staff,
                                                                                                  screenshots):
    page = await phone.new_page()
    await sign_in_at_the_counter(page, staff, stack.base_url)
    await key_in(page, "725")
    await page.get_by_test_id("lock").tap()
    setting = page.get_by_test_id("set-pin")
    await expect(setting).to_contain_text("Set a PIN to lock this device")
    await page.screenshot(path=screenshots / "app-phone-set-pin.png", full_page=True)
    await setting.get_by_label("PIN (4 to 8 digits)").fill("4829")
    await setting.get_by_label("Your password").fill(staff.password)
    await page.get_by_role("button", name="Save PIN and lock").tap()
    await expect(page.get_by_test_id("locked")).to_be_visible()
    for hidden in ("sell", "checkout", "sales", "refunds", "lock"):
        await expect(page.get_by_test_id(hidden)).to_be_hidden()
    await page.screenshot(path=screenshots / "app-phone-locked.png", full_page=True)

    await page.reload()  # the lock is the server's: a reload, or another tab, opens nothing
    await expect(page.get_by_test_id("locked")).to_be_visible()
    unlock_field = page.get_by_test_id("locked").get_by_label("PIN (4 to 8 digits)")
    await unlock_field.fill("1111")
    await page.get_by_role("button", name="Unlock").tap()
    await expect(page.get_by_test_id("unlock-error")).to_have_text("Wrong PIN: 4 tries left")
    await unlock_field.fill("4829")
    await page.get_by_role("button", name="Unlock").tap()
    await expect(page.get_by_test_id("sell")).to_be_visible()

    await page.get_by_test_id("lock").tap()  # the PIN is set: the lock is one tap now
    await expect(page.get_by_test_id("locked")).to_be_visible()
    for n in range(5):
        await unlock_field.fill("0000")
        await page.get_by_role("button", name="Unlock").tap()
        if n < 4:
            await expect(page.get_by_test_id("unlock-error")).to_have_text(f"Wrong PIN: {4 - n} tries left")
    await expect(page.get_by_test_id("signed-out")).to_have_text(re.compile("You are signed out."))
    await expect(page.get_by_test_id("locked")).to_be_hidden()
    await page.screenshot(path=screenshots / "app-phone-signed-out.png", full_page=True)
    assert (await page.request.get(stack.base_url + APP + "/me")).status == 401


async def test_a_hostile_note_is_shown_as_text_and_a_sale_on_screen_goes_when_the_network_does(stack, phone, staff):
    page = await phone.new_page()
    await sign_in_at_the_counter(page, staff, stack.base_url)
    note = '<img src=x onerror="window.pwned=1">'
    await key_in(page, "300")
    await page.get_by_label("Note (optional)").fill(note)
    await page.get_by_test_id("charge").tap()
    await expect(page.get_by_test_id("sale-status")).to_have_text("Waiting for payment")
    await expect(page.get_by_test_id("checkout")).to_contain_text(note)

    await page.context.set_offline(True)
    await page.evaluate("window.dispatchEvent(new Event('offline'))")  # what the browser fires as the link drops
    await expect(page.get_by_test_id("offline")).to_be_visible()
    await expect(page.get_by_test_id("sale-status")).to_be_hidden()  # no status that can no longer be refreshed
    await page.context.set_offline(False)
    await page.evaluate("window.dispatchEvent(new Event('online'))")
    await expect(page.get_by_test_id("sale-status")).to_have_text("Waiting for payment")

    await page.get_by_role("button", name="Today's sales").tap()
    await expect(page.get_by_test_id("sales").locator("li")).to_contain_text(note)
    assert await page.locator("#sales-list img, #checkout img:not(#qr):not(#receipt-qr)").count() == 0
    assert await page.evaluate("window.pwned") is None


async def test_an_unpaid_sale_turns_expired_within_2_s_of_its_sessions_end(stack, phone, staff):
    page = await phone.new_page()
    await sign_in_at_the_counter(page, staff, stack.base_url)
    await key_in(page, "999")
    await page.get_by_test_id("charge").tap()
    await expect(page.get_by_test_id("sale-status")).to_have_text("Waiting for payment")
    stack.clock.advance(stack.settings.session_ttl_s)
    await expect(page.get_by_test_id("sale-status")).to_have_text("Expired", timeout=2000)
    await expect(page.get_by_test_id("sale-qr")).to_be_hidden()

    assert await expire_due(stack, 1) >= 1  # the scheduler's sweep cancels it (payment_timeout)
    order_id = await stack.pool.fetchval("SELECT order_id FROM counter_sales c JOIN staff_users u USING (user_id)"
                                         " WHERE u.email = $1", staff.email)
    for _ in range(100):  # the actor applies the sweep's cancel a moment later
        if await stack.pool.fetchval("SELECT status FROM orders WHERE order_id = $1", order_id) == "CANCELED":
            break
        await asyncio.sleep(0.05)
    await page.get_by_role("button", name="Today's sales").tap()
    await expect(page.locator(f'[data-order-id="{order_id}"]')).to_have_text("#1001 · 9.99 USD · Expired")
