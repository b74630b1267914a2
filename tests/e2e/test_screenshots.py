"""Screenshots of the checkout page at a phone and a desktop width, saved to artifacts/screenshots/ to be looked at;
each also asserts what it shows: the merchant, the items and the total, the QR code, and no error in the console."""

from __future__ import annotations

import pytest
from playwright.async_api import Frame, Page, expect

from tests.e2e.support import console_errors

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
ITEMS = [
    {"name": "Ethiopia Guji, 250 g", "unit_amount": "14.50", "quantity": 2},
    {"name": "Paper filters (100)", "unit_amount": "4.25", "quantity": 1},
]


async def shows_the_order(view: Page | Frame) -> None:
    await expect(view.get_by_text("E2E Coffee Roasters").first).to_be_visible()
    for item in ITEMS:
        await expect(view.get_by_text(item["name"]).first).to_be_visible()
    await expect(view.locator("body")).to_contain_text("33.25")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("locale", ["en", "ja"])
async def test_checkout_page_screenshot(shop, screenshots, size, locale):
    created = await shop.session(line_items=ITEMS)
    errors = console_errors(shop.page)
    await shop.page.set_viewport_size(SIZES[size])
    await shop.page.goto(shop.checkout_url(created["session_key"], locale=locale))
    await shop.page.wait_for_selector("details.quote[open] svg.qr-code")
    await shows_the_order(shop.page)
    assert await shop.page.get_attribute("html", "lang") == locale
    await shop.page.screenshot(path=screenshots / f"checkout-{locale}-{size}.png", full_page=True)
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
async def test_paid_checkout_screenshot(shop, screenshots, size):
    created = await shop.session(line_items=ITEMS)
    await shop.pay(created["order_id"], "33.25")
    errors = console_errors(shop.page)
    await shop.page.set_viewport_size(SIZES[size])
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    await shop.page.wait_for_selector("#status[data-state=paid]")
    await expect(shop.page.locator("#status")).to_be_visible()
    await expect(shop.page.locator("svg.qr-code")).to_have_count(0)  # nothing left to pay
    await shop.page.screenshot(path=screenshots / f"checkout-paid-{size}.png", full_page=True)
    assert errors == []


@pytest.mark.parametrize("mode, size", [("popup", "desktop"), ("popup", "phone"), ("embed", "phone")])
async def test_framed_checkout_screenshot(shop, screenshots, mode, size):
    created = await shop.session(line_items=ITEMS)
    errors = console_errors(shop.page)
    await shop.page.set_viewport_size(SIZES[size])
    await shop.open()
    await shop.checkout({"sessionId": created["session_key"], "mode": mode})
    await shop.event("ready")
    frame = await shop.frame()
    await frame.wait_for_selector("details.quote[open] svg.qr-code")
    await shows_the_order(frame)
    await shop.page.screenshot(path=screenshots / f"sdk-{mode}-{size}.png")
    assert errors == []
