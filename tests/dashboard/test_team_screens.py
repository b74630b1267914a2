"""The team and audit pages in Chromium at a phone's and a desktop's width: an owner invites from the page, the
invited person joins through the link, hostile addresses stay text, and the app's menu leads an owner to the team."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.app.conftest import phone  # noqa: F401
from tests.dashboard.support import SIZES, make_staff, sign_in
from tests.e2e.support import console_errors

HOSTILE = "<script>alert(1)</script>@example.com"


def _dialogs(page) -> list[str]:
    opened: list[str] = []
    page.on("dialog", lambda dialog: opened.append(dialog.message))
    return opened


@pytest.mark.parametrize("size", SIZES)
async def test_an_owner_invites_from_the_team_page_and_the_invited_cashier_joins(browser, page, stack, staff,
                                                                                screenshots, size):
    await page.set_viewport_size(SIZES[size])
    live = await stack.other_mode(staff.client, livemode=True)  # the team is the live key's to manage
    status, _ = await live.post(f"/b2b/v1/merchants/{staff.merchant_id}/staff/invitations",
                                        {"email": HOSTILE, "role": "manager"})
    assert status == 201
    await sign_in(page, staff)
    errors, dialogs = console_errors(page), _dialogs(page)
    await page.get_by_role("link", name="Team").click()
    await expect(page).to_have_url(re.compile(r".*/dashboard/team$"))
    await expect(page.get_by_test_id("member-email")).to_have_text(f"{staff.email} (you)")
    await expect(page.get_by_test_id("pending-invitation")).to_contain_text(HOSTILE)

    await page.get_by_label("Email", exact=True).fill(f"till-{size}@example.com")
    await page.get_by_label("Role", exact=True).select_option("cashier")
    await page.get_by_test_id("invite").click()
    link = await page.get_by_test_id("invitation-url").input_value()
    assert "/dashboard/invite/inv_" in link
    await expect(page.get_by_test_id("invitation-link")).to_contain_text("Mail is not set up")
    if size == "phone":
        assert await page.evaluate("document.documentElement.scrollWidth") <= SIZES["phone"]["width"]
    await page.screenshot(path=screenshots / f"team-{size}.png", full_page=True)

    joining = await (await browser.new_context(viewport=SIZES[size])).new_page()
    try:
        await joining.goto(stack.base_url + "/dashboard/invite/" + link.rsplit("/invite/", 1)[1])
        await expect(joining.get_by_test_id("invited-email")).to_have_text(f"till-{size}@example.com")
        await joining.get_by_label("Password (at least 10 characters)").fill("the cashier's own password")
        await joining.get_by_label("The same password again").fill("the cashier's own password")
        await joining.get_by_role("button", name="Join and sign in").click()
        await joining.wait_for_url(re.compile(r".*/dashboard/app$"))
        await joining.goto(stack.base_url + "/dashboard/invite/" + link.rsplit("/invite/", 1)[1])
        await expect(joining.locator("main")).to_contain_text("was used already")
    finally:
        await joining.context.close()

    await page.goto(f"{staff.dashboard}/audit")
    await expect(page.get_by_test_id("audit-event").first).to_be_visible()
    await page.get_by_label("Action").select_option("staff.invited")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_test_id("audit-action")).to_have_text(["staff.invited", "staff.invited"])
    await expect(page.get_by_test_id("audit-details").last).to_contain_text(f"email: {HOSTILE}")
    if size == "phone":
        assert await page.evaluate("document.documentElement.scrollWidth") <= SIZES["phone"]["width"]
    await page.screenshot(path=screenshots / f"audit-{size}.png", full_page=True)
    assert dialogs == [] and errors == []


async def test_the_apps_menu_leads_an_owner_to_the_team_and_shows_a_cashier_nothing(stack, staff, phone,  # noqa: F811
                                                                                   screenshots):
    page = await phone.new_page()
    await sign_in(page, staff)
    await page.goto(f"{staff.dashboard}/app?locale=es")
    await expect(page.get_by_test_id("app-menu")).to_be_visible()
    await expect(page.get_by_test_id("menu-audit")).to_have_text("Registro de auditoría")
    await page.screenshot(path=screenshots / "app-phone-owner-menu.png", full_page=True)
    await page.get_by_test_id("menu-team").click()
    await page.wait_for_url(re.compile(r".*/dashboard/team$"))
    await expect(page.get_by_role("heading", name="Team", exact=True)).to_be_visible()
    await page.close()

    cashier = await make_staff(stack, staff.client, role="cashier")
    await phone.clear_cookies()
    page = await phone.new_page()
    await page.goto(f"{staff.dashboard}/signin")
    await page.get_by_label("Email").fill(cashier.email)
    await page.get_by_label("Password").fill(cashier.password)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(re.compile(r".*/dashboard/app$"))
    await expect(page.get_by_test_id("sell")).to_be_visible()
    await expect(page.get_by_test_id("app-menu")).to_be_hidden()
    assert (await page.goto(f"{staff.dashboard}/team")).status == 403
