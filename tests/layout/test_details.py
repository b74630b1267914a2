"""What people tripped on in the first hour, measured in Chromium on the pages of tests/layout/screens.py: the
service's front door, the audit log's From column, the invitation form's username, the counter's Print receipt
label, the receipt's Paid on line, the space under the payment links' introduction, and the bell."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.dashboard.support import SIZES
from tests.layout.screens import opened

# The y of an element's first line's baseline: an empty inline-block sits on the baseline with its bottom edge.
BASELINE = """(el) => { const probe = document.createElement('span'); probe.style.display = 'inline-block';
  el.prepend(probe); const y = probe.getBoundingClientRect().bottom; probe.remove(); return y; }"""
# Whether a line of text stays one line: its box is no taller than one line of its font.
ONE_LINE = "(el) => el.getBoundingClientRect().height < 1.5 * parseFloat(getComputedStyle(el).lineHeight)"


async def test_the_front_door_leads_to_the_dashboards_sign_in(browser, world):
    async with opened(browser, world, "home") as page:
        response = await page.request.get(world.urls["home"])
        assert (response.status, response.headers["content-type"].split(";")[0]) == (200, "text/html")
        await page.get_by_role("link", name="Sign in to the dashboard").click()
        await expect(page.get_by_test_id("signin-form")).to_be_visible()
        assert page.url == world.owner.dashboard + "/signin"


@pytest.mark.parametrize("size", SIZES)
async def test_the_audit_logs_from_column_keeps_each_value_whole_on_one_line(browser, world, size):
    async with opened(browser, world, "audit", size) as page:
        agent = page.get_by_test_id("audit-agent").filter(has_text="Chrome").first
        full = await page.evaluate("navigator.userAgent")
        assert len(full) > 80  # long enough to be cut at any width
        # Whole in the page (the title shows all of it); cut on screen only by the browser, with an ellipsis.
        assert (await agent.text_content(), await agent.get_attribute("title")) == (full, full)
        assert await agent.evaluate("e => getComputedStyle(e).textOverflow") == "ellipsis"
        for line in (agent, page.get_by_test_id("audit-request").first):
            assert await line.evaluate(ONE_LINE), "a value wraps inside a word"


async def test_the_invitation_form_names_the_username_a_password_manager_saves(browser, world):
    async with opened(browser, world, "invitation") as page:
        messages: list[str] = []
        page.on("console", lambda message: messages.append(message.text))
        await page.reload()
        await expect(page.get_by_test_id("invite-accept")).to_be_visible()
        form = page.get_by_test_id("invite-accept")
        username = form.locator("input[autocomplete=username]")
        await expect(username).to_have_value("new.barista@example.com")
        await expect(form.get_by_label("Email")).to_have_attribute("readonly", "")
        assert await form.locator("input[type=password][autocomplete=new-password]").count() == 2
        assert [m for m in messages if "username" in m] == []


@pytest.mark.parametrize("size", SIZES)
async def test_the_counters_print_receipt_label_sits_in_the_middle_of_its_button(browser, world, size):
    async with opened(browser, world, "counter-paid", size) as page:
        button = await page.get_by_test_id("receipt-print").bounding_box()
        text = await page.get_by_test_id("receipt-print").evaluate(
            "e => { const r = document.createRange(); r.selectNodeContents(e); const b = r.getBoundingClientRect();"
            " return {y: b.y, height: b.height}; }")
        middle, text_middle = button["y"] + button["height"] / 2, text["y"] + text["height"] / 2
        assert abs(middle - text_middle) <= 2, (button, text)
        bell = page.get_by_test_id("bell")
        await expect(bell).to_be_visible()
        # Drawn in the bar's white like its words, not a link's blue on the dark green.
        assert await bell.evaluate("e => getComputedStyle(e.querySelector('svg')).color") == "rgb(255, 255, 255)"


@pytest.mark.parametrize("size", SIZES)
async def test_the_receipts_paid_on_label_sits_on_its_values_baseline(browser, world, size):
    async with opened(browser, world, "receipt", size) as page:
        facts = page.locator(".receipt-facts")
        label = await facts.locator("dt").first.evaluate(BASELINE)
        value = await page.get_by_test_id("receipt-paid-at").evaluate(BASELINE)
        assert abs(label - value) <= 1, (label, value)


@pytest.mark.parametrize("size", SIZES)
async def test_the_payment_links_stand_clear_of_the_introduction(browser, world, size):
    async with opened(browser, world, "payment-links", size) as page:
        intro = await page.locator("h1 + .hint").bounding_box()
        card = await page.get_by_test_id("payment-link").first.bounding_box()
        assert card["y"] - (intro["y"] + intro["height"]) >= 8
