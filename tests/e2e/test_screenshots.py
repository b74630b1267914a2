"""Screenshots of the checkout page at a phone and a desktop width, saved to artifacts/screenshots/ to be looked at."""

from __future__ import annotations

import pytest

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
ITEMS = [
    {"name": "Ethiopia Guji, 250 g", "unit_amount": "14.50", "quantity": 2},
    {"name": "Paper filters (100)", "unit_amount": "4.25", "quantity": 1},
]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("locale", ["en", "ja"])
async def test_checkout_page_screenshot(shop, screenshots, size, locale):
    created = await shop.session(line_items=ITEMS)
    await shop.page.set_viewport_size(SIZES[size])
    await shop.page.goto(shop.checkout_url(created["session_key"], locale=locale))
    await shop.page.wait_for_selector("details.quote[open] svg.qr-code")
    await shop.page.screenshot(path=screenshots / f"checkout-{locale}-{size}.png", full_page=True)


@pytest.mark.parametrize("size", SIZES)
async def test_paid_checkout_screenshot(shop, screenshots, size):
    created = await shop.session(line_items=ITEMS)
    await shop.pay(created["order_id"], "33.25")
    await shop.page.set_viewport_size(SIZES[size])
    await shop.page.goto(shop.checkout_url(created["session_key"]))
    await shop.page.wait_for_selector("#status[data-state=paid]")
    await shop.page.screenshot(path=screenshots / f"checkout-paid-{size}.png", full_page=True)


@pytest.mark.parametrize("mode, size", [("popup", "desktop"), ("popup", "phone"), ("embed", "phone")])
async def test_framed_checkout_screenshot(shop, screenshots, mode, size):
    created = await shop.session(line_items=ITEMS)
    await shop.page.set_viewport_size(SIZES[size])
    await shop.open()
    await shop.checkout({"sessionId": created["session_key"], "mode": mode})
    await shop.event("ready")
    await (await shop.frame()).wait_for_selector("details.quote[open] svg.qr-code")
    await shop.page.screenshot(path=screenshots / f"sdk-{mode}-{size}.png")
