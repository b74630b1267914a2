"""Payment links in the dashboard: owner and manager make, share (URL and QR) and archive them and see each link's
orders, paid total and conversion; a cashier may not; hostile names are text; a bad form names its field."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.dashboard.support import Http, decode_qr, make_staff, sign_in
from tests.integration.helpers import pay

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
HOSTILE = '<img src=x onerror="window.__hacked=1">'


async def _signed_in(stack, staff, role: str) -> Http:
    user = staff if role == "owner" else await make_staff(stack, staff.client, role=role)
    http = Http(staff.dashboard)
    assert (await http.sign_in(user))[0] == 303
    return http


@pytest.mark.parametrize("role", ["owner", "manager"])
async def test_owner_and_manager_create_and_archive_a_link(stack, staff, role):
    http = await _signed_in(stack, staff, role)
    try:
        token = await http.csrf("/test/payment-links")
        status, _, location = await http.post("/test/payment-links", {
            "csrf": token, "name": "Gift card", "amount": "25.00", "max_uses": "10", "expires_at": "2099-01-01T10:00"})
        assert status == 303 and location.endswith("/test/payment-links")
        status, listing = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/payment-links")
        [link] = listing["data"]
        assert (link["name"], link["amount"], link["max_uses"], link["expires_at"]) == (
            "Gift card", "25.00", 10, "2099-01-01T10:00:00Z")
        status, text = await http.get("/test/payment-links")
        assert status == 200 and link["url"] in text and "Payment link “Gift card” created." in text
        status, _, _ = await http.post(f"/test/payment-links/{link['payment_link_id']}/archive", {"csrf": token})
        assert status == 303
        status, read = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/payment-links/"
                                              f"{link['payment_link_id']}")
        assert read["status"] == "archived"
    finally:
        await http.close()


async def test_a_cashier_may_not_and_nothing_changes(stack, staff):
    owner = await _signed_in(stack, staff, "owner")
    cashier = await _signed_in(stack, staff, "cashier")
    try:
        status, link = await staff.client.post(f"/b2b/v1/merchants/{staff.merchant_id}/payment-links",
                                               {"name": "Tips"})
        status, text = await cashier.get("/test/payment-links")
        assert status == 403 and "Tips" not in text
        _, orders_page = await owner.get("/test/orders")
        assert 'href="/dashboard/test/payment-links"' in orders_page
        # The role is checked before anything is read or written, the form's token included.
        for path, data in (("/test/payment-links", {"name": "Sneaky", "amount": "1.00"}),
                           (f"/test/payment-links/{link['payment_link_id']}/archive", {})):
            status, _, _ = await cashier.post(path, {"csrf": "any", **data})
            assert status == 403
        status, listing = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/payment-links")
        assert [(x["name"], x["status"]) for x in listing["data"]] == [("Tips", "active")]
    finally:
        await owner.close()
        await cashier.close()


@pytest.mark.parametrize(("form", "param"), [
    ({"name": "X", "amount": "1.00", "min_amount": "0.50"}, "amount"),
    ({"name": "X", "min_amount": "9.00", "max_amount": "1.00"}, "min_amount"),
    ({"name": "X", "max_uses": "many"}, "max_uses"),
    ({"amount": "1.00"}, "name"),
])
async def test_a_bad_form_names_its_field_and_makes_nothing(stack, staff, http, form, param):
    await http.sign_in(staff)
    token = await http.csrf("/test/payment-links")
    status, text, _ = await http.post("/test/payment-links", {"csrf": token, **form})
    assert status == 422 and f'id="{param}-error"' in text
    status, listing = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/payment-links")
    assert listing["data"] == []


@pytest.mark.parametrize("size", SIZES)
async def test_the_links_screen_shows_orders_paid_total_conversion_url_and_qr(stack, staff, page, screenshots, size):
    client = staff.client
    status, link = await client.post(f"/b2b/v1/merchants/{staff.merchant_id}/payment-links",
                                     {"name": HOSTILE, "description": HOSTILE, "amount": "5.00"})
    assert status == 201
    for _ in range(4):  # four buyers choose to pay; one pays
        async with stack.http.post(link["url"].replace(stack.settings.checkout_base(), stack.base_url), data={},
                                   allow_redirects=False) as resp:
            assert resp.status == 303
    order_id = await stack.pool.fetchval(
        "SELECT order_id FROM payment_link_orders WHERE payment_link_id = $1 LIMIT 1", link["payment_link_id"])
    assert (await pay(client, order_id, "5.00"))[0] == 201

    await page.set_viewport_size(SIZES[size])
    await sign_in(page, staff)
    await page.goto(staff.url("/payment-links"))
    card = page.get_by_test_id("payment-link")
    await expect(card.get_by_test_id("link-name")).to_have_text(HOSTILE)
    await expect(card.get_by_test_id("link-orders")).to_have_text("4")
    await expect(card.get_by_test_id("link-paid")).to_have_text("1 · 5.00 USD")
    await expect(card.get_by_test_id("link-conversion")).to_have_text("25 %")
    await expect(card.get_by_test_id("link-url")).to_have_value(link["url"])
    await card.get_by_text("QR code", exact=True).click()
    assert await decode_qr(card.get_by_test_id("link-qr")) == link["url"]
    assert await page.evaluate("window.__hacked === undefined")
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await page.screenshot(path=screenshots / f"payment-links-{size}.png", full_page=True)
