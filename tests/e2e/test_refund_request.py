"""sdk.openRefundRequest in each mode, submitting the real hosted refund form (web/pages/refund.py).

They drive the form by its field names (those of the customer refund body) and wait for the refund status card
the form leads to once submitted.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.support import SEPOLIA_USDC, console_errors
from tests.integration.helpers import pay

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


async def mint(shop) -> str:
    """A token for a paid 10.00 USD order, as the merchant's backend mints it."""
    created = await shop.session()
    assert (await pay(shop.client, created["order_id"], "10.00"))[0] == 201
    status, token = await shop.client.post(f"/b2b/v1/merchants/{shop.client.merchant_id}/refund-requests",
                                           {"ref_type": "order_id", "ref_value": created["order_id"], "amount": "10.00"})
    assert status == 201, token
    return token["token"]


async def submit(frame, destination: str) -> None:
    form = "form[data-testid=refund-form]"
    await frame.wait_for_selector(form)
    await frame.select_option(f"{form} [name=refund_network]", "sepolia")
    await frame.select_option(f"{form} [name=refund_token_address]", SEPOLIA_USDC)
    await frame.fill(f"{form} [name=refund_to_address]", destination)
    await frame.fill(f"{form} [name=amount]", "10.00")
    await frame.click(f"{form} [type=submit]")
    await frame.wait_for_selector("[data-testid=refund-status-card]")


async def frame_of(shop):
    return await (await shop.page.wait_for_selector("iframe")).content_frame()


@pytest.mark.parametrize("mode", ["popup", "embed"])
async def test_a_framed_refund_request_submits_and_reports_link_token_and_refund_id(shop, mode):
    token = await mint(shop)
    await shop.open()
    assert await shop.page.evaluate("(o) => openRefund(o)", {"token": token, "mode": mode}) is None
    await submit(await frame_of(shop), shop.addresses["sepolia"])
    result = await shop.event("success")
    assert set(result) == {"linkToken", "refundId"}
    status, refund = await shop.client.get(f"/b2b/v1/refunds/{result['refundId']}")
    assert status == 200 and refund["link_token"] == result["linkToken"] and refund["status"] in ("PENDING", "APPROVED")
    assert await shop.events("cancel") == []


async def test_a_redirected_refund_request_submits_on_the_hosted_page(shop):
    token = await mint(shop)
    await shop.open()
    await shop.page.evaluate("(o) => openRefund(o)", {"token": token, "mode": "redirect"})
    await shop.page.wait_for_url(f"{shop.stack.base_url}/refund-request/**")
    await submit(shop.page.main_frame, shop.addresses["sepolia"])
    status, body = await shop.client.get(f"/b2b/v1/refund-requests/{token}")
    assert status == 200 and body["status"] == "SUBMITTED"


@pytest.mark.parametrize("size", SIZES)
async def test_refund_form_screenshot(shop, screenshots, size):
    token = await mint(shop)
    errors = console_errors(shop.page)
    await shop.page.set_viewport_size(SIZES[size])
    await shop.page.goto(f"{shop.stack.base_url}/refund-request/{token}")
    form = shop.page.get_by_test_id("refund-form")
    await expect(form).to_be_visible()
    await expect(shop.page.get_by_test_id("refund-ceiling")).to_contain_text("10.00")
    await expect(form.locator("[name=amount]")).to_have_value("10.00")
    await expect(form.locator("[type=submit]")).to_be_visible()
    await expect(shop.page.get_by_test_id("refund-error")).to_be_hidden()
    await shop.page.screenshot(path=screenshots / f"refund-form-{size}.png", full_page=True)
    assert errors == []
