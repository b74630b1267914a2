"""Popup mode against the real checkout page: focus, Tab trap, every way to close, scroll lock, load failures, success."""

from __future__ import annotations

import asyncio
import socket

import pytest

from tests.e2e.support import OVERLAY

CLOSED = "(sel) => document.querySelector(sel) === null"


async def open_popup(shop, **options) -> dict:
    created = await shop.session()
    await shop.open()
    assert await shop.checkout({"sessionId": created["session_key"], **options}) is None
    await shop.event("ready")
    return created


async def active_in_parent(shop) -> str:
    """Where the merchant page's focus is: the SDK's close button, its iframe, or anything else."""
    return await shop.page.evaluate("""() => {
        const a = document.activeElement, dialog = document.querySelector('div[role=dialog]');
        if (a && a.getAttribute('aria-label') === 'Close') return 'close';
        if (a && a.tagName === 'IFRAME') return 'iframe';
        return dialog && dialog.contains(a) ? 'dialog' : 'outside:' + (a ? a.tagName + '#' + a.id : 'none');
    }""")


async def test_popup_overlay_takes_focus_on_its_close_button(shop):
    await open_popup(shop)
    assert await active_in_parent(shop) == "close"
    z = await shop.page.evaluate("getComputedStyle(document.querySelector('div[role=dialog]').parentElement).zIndex")
    assert z == "2147483647"


async def test_tab_stays_inside_the_popup(shop):
    await open_popup(shop)
    seen = set()
    for _ in range(24):  # more presses than the page has focusable things, so the focus wraps at least once
        await shop.page.keyboard.press("Tab")
        where = await active_in_parent(shop)
        assert where in ("close", "iframe"), where
        seen.add(where)
    assert seen == {"close", "iframe"}
    for _ in range(4):
        await shop.page.keyboard.press("Shift+Tab")
        assert await active_in_parent(shop) in ("close", "iframe")


@pytest.mark.parametrize("how", ["escape", "escape_inside_page", "backdrop", "close_button", "sdk_close", "cancel_link"])
async def test_each_way_of_closing_calls_on_cancel_once(shop, how):
    await open_popup(shop)
    if how == "escape":
        await shop.page.keyboard.press("Escape")
    elif how == "escape_inside_page":
        frame = await shop.frame()
        await frame.focus("details.quote summary")
        await shop.page.keyboard.press("Escape")
    elif how == "backdrop":
        await shop.page.mouse.click(5, 5)
    elif how == "close_button":
        await shop.page.click(f"{OVERLAY} button[aria-label=Close]")
    elif how == "sdk_close":
        await shop.page.evaluate("window.sdk.close()")
    else:
        frame = await shop.frame()
        await frame.click("#cancel")
    await shop.event("cancel")
    await shop.page.wait_for_function(CLOSED, arg=OVERLAY)
    assert [e["name"] for e in await shop.events()] == ["ready", "cancel"]


async def test_body_scroll_is_locked_while_open_and_restored_after(shop):
    created = await shop.session()
    await shop.open()
    await shop.page.evaluate("document.body.style.overflow = 'scroll'")
    await shop.checkout({"sessionId": created["session_key"]})
    await shop.event("ready")
    assert await shop.page.evaluate("document.body.style.overflow") == "hidden"
    await shop.page.keyboard.press("Escape")
    await shop.page.wait_for_function(CLOSED, arg=OVERLAY)
    assert await shop.page.evaluate("document.body.style.overflow") == "scroll"


@pytest.mark.parametrize("asked, expected", [
    ({"height": 50, "width": 100}, (400, 320)),
    ({"height": 5000, "width": 5000}, (1000, 1280)),
    ({"height": 640}, (640, 560)),
])
async def test_resize_requests_are_clamped_to_the_popup_limits(shop, asked, expected):
    await open_popup(shop)
    height, width = expected
    assert await shop.resize(await shop.frame(), asked) == {"height": f"{height}px", "width": f"{width}px"}


async def test_the_page_reports_its_own_height_and_the_popup_follows(shop):
    await open_popup(shop, hideSummary=True)
    frame = await shop.frame()
    # Fold the open quote (and leave out the summary: a test-mode page also shows Simulate payment) so the page
    # is shorter than the popup's limit and its own height shows through.
    await frame.click("details.quote[open] summary")
    wanted = 0
    for _ in range(50):  # until the SDK has applied the page's latest report
        wanted = await frame.evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
        height = await shop.page.evaluate("parseFloat(document.querySelector('div[role=dialog]').style.height)")
        if height == min(max(wanted, 400), 1000):
            break
        await asyncio.sleep(0.1)
    assert 400 < wanted < 1000 and height == wanted


async def test_a_second_checkout_is_refused_with_already_open_error(shop):
    created = await open_popup(shop)
    assert await shop.checkout({"sessionId": created["session_key"]}) is None
    error = await shop.event("error")
    assert error["code"] == "already_open_error" and error["isServiceError"]
    assert await shop.page.locator(OVERLAY).count() == 1


async def test_an_unreachable_checkout_origin_is_an_iframe_load_error(shop):
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    created = await shop.session()
    await shop.open()
    await shop.checkout({"sessionId": created["session_key"]}, checkout_url=f"http://127.0.0.1:{port}")
    error = await shop.event("error")
    assert error["code"] == "iframe_load_error"
    await shop.page.wait_for_function(CLOSED, arg=OVERLAY)
    assert await shop.events("cancel") == []


async def test_a_page_that_never_becomes_ready_times_out(shop):
    created = await shop.session()
    await shop.open()
    await shop.checkout({"sessionId": created["session_key"], "timeoutMs": 800}, checkout_url=f"{shop.site}/silent")
    error = await shop.event("error")
    assert error["code"] == "iframe_timeout_error"
    await shop.page.wait_for_function(CLOSED, arg=OVERLAY)
    assert [e["name"] for e in await shop.events()] == ["error"]


async def test_an_unknown_session_closes_with_an_error_naming_it(shop):
    await shop.open()
    await shop.checkout({"sessionId": "cs_test_nosuchsession"})
    error = await shop.event("error")
    assert error["code"] == "iframe_load_error" and "session_not_found" in error["message"]
    assert await shop.events("cancel") == []


async def test_a_paid_session_fires_on_success_with_its_session_id(shop):
    created = await open_popup(shop)
    await shop.pay(created["order_id"], "10.00")
    assert await shop.event("success") == {"sessionId": created["session_key"]}
    await shop.page.wait_for_function(CLOSED, arg=OVERLAY)
    assert [e["name"] for e in await shop.events()] == ["ready", "success"]
