"""The Issue Refund dialog by keyboard alone: opened with Enter, its toggle with the arrow keys, sent with Enter,
closed with Escape, focus back where it was."""

from __future__ import annotations

import re

from playwright.async_api import expect

from tests.dashboard.support import sign_in
from tests.integration.test_refunds_api import paid_order


async def focused(page) -> str:
    return await page.evaluate("document.activeElement.getAttribute('data-testid') || document.activeElement.id")


async def test_the_refund_dialog_is_usable_by_keyboard(page, staff):
    order_id = await paid_order(staff.client, "10.00")
    await sign_in(page, staff)
    await page.goto(staff.url(f"/orders/{order_id}"))
    await page.get_by_test_id("issue-refund").focus()
    await page.keyboard.press("Enter")
    dialog = page.get_by_test_id("refund-dialog")
    await expect(dialog).to_be_visible()
    assert await page.evaluate("document.activeElement.closest('dialog') !== null")  # focus moved into it
    await page.keyboard.press("Escape")
    await expect(dialog).to_be_hidden()
    assert await focused(page) == "issue-refund"  # back where it was

    await page.keyboard.press("Enter")
    await expect(dialog).to_be_visible()
    await dialog.get_by_test_id("mode-execute").focus()
    await page.keyboard.press("ArrowDown")  # the radio group: "send a link"
    assert await focused(page) == "mode-link"
    await expect(dialog.get_by_label("The customer's address")).to_be_hidden()
    await page.keyboard.press("Tab")
    assert await focused(page) == "refund-amount"
    await page.keyboard.press("Control+A")
    await page.keyboard.type("1.50")
    await page.keyboard.press("Enter")
    await page.wait_for_url(re.compile(r".*/dashboard/test/refund-requests/rfqt_[A-Za-z0-9_-]+$"))
    await expect(page.get_by_test_id("refund-link-result")).to_be_visible()
    await page.keyboard.press("Enter")  # "Done" has the focus
    await page.wait_for_url(re.compile(rf".*/dashboard/test/orders/{order_id}$"))
