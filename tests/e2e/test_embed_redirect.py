"""Embed and redirect modes against the real checkout page."""

from __future__ import annotations

import pytest

EMBED_FRAME = "#embed iframe"


async def open_embed(shop, **options) -> dict:
    created = await shop.session(**options.pop("session", {}))
    await shop.open("esm")
    assert await shop.checkout({"sessionId": created["session_key"], "mode": "embed", **options}) is None
    await shop.event("ready")
    return created


async def embed_height(shop) -> float:
    return await shop.page.evaluate("(sel) => parseFloat(document.querySelector(sel).style.height)", EMBED_FRAME)


async def test_embed_mounts_full_width_with_payment_permissions_and_follows_the_page_height(shop):
    await open_embed(shop)
    frame_el = await shop.page.query_selector(EMBED_FRAME)
    assert await frame_el.get_attribute("allow") == "payment; clipboard-write"
    assert await shop.page.evaluate("(sel) => document.querySelector(sel).style.width", EMBED_FRAME) == "100%"
    frame = await shop.frame()
    wanted = await frame.evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
    await shop.page.wait_for_function("([sel, h]) => parseFloat(document.querySelector(sel).style.height) === h",
                                      arg=[EMBED_FRAME, min(max(wanted, 200), 2000)])
    # Folding the open network's details makes the page shorter; the embed follows it.
    before = await embed_height(shop)
    await frame.click("details.quote[open] summary")
    await shop.page.wait_for_function("([sel, h]) => parseFloat(document.querySelector(sel).style.height) < h",
                                      arg=[EMBED_FRAME, before])


@pytest.mark.parametrize("asked, expected", [(50, 200), (5000, 2000), (900, 900)])
async def test_embed_resize_is_clamped(shop, asked, expected):
    await open_embed(shop)
    # The width asked is ignored: an embed is always 100% wide.
    assert await shop.resize(await shop.frame(), {"height": asked, "width": 320}) == {
        "height": f"{expected}px", "width": "100%"}


async def test_a_paid_embed_fires_on_success_and_detaches(shop):
    created = await open_embed(shop)
    await shop.pay(created["order_id"], "10.00")
    assert await shop.event("success") == {"sessionId": created["session_key"]}
    await shop.page.wait_for_function("(sel) => document.querySelector(sel) === null", arg=EMBED_FRAME)


async def test_cancel_inside_an_embed_calls_on_cancel(shop):
    await open_embed(shop)
    frame = await shop.frame()
    await frame.click("#cancel")
    await shop.event("cancel")


async def test_redirect_goes_to_the_page_and_back_to_success_url_when_paid(shop):
    created = await shop.session(success_url=f"{shop.site}/return?result=paid",
                                 cancel_url=f"{shop.site}/return?result=canceled")
    await shop.open()
    await shop.checkout({"sessionId": created["session_key"], "mode": "redirect", "locale": "ja"})
    await shop.page.wait_for_url(f"{shop.stack.base_url}/c/**")
    assert "return_url=" in shop.page.url and "sdk_mode" not in shop.page.url
    assert await shop.page.get_attribute("html", "lang") == "ja"
    # The session's own cancel_url wins over return_url.
    assert await shop.page.get_attribute("#cancel", "href") == f"{shop.site}/return?result=canceled"
    await shop.pay(created["order_id"], "10.00")
    await shop.page.wait_for_url(f"{shop.site}/return?result=paid", timeout=10_000)
    assert await shop.page.text_content("#returned") == "paid"


async def test_redirect_without_session_urls_returns_to_the_merchant_page(shop):
    created = await shop.session()
    await shop.open()
    shop_url = shop.page.url
    await shop.checkout({"sessionId": created["session_key"], "mode": "redirect"})
    await shop.page.wait_for_url(f"{shop.stack.base_url}/c/**")
    assert await shop.page.get_attribute("#cancel", "href") == shop_url
    await shop.page.click("#cancel")
    await shop.page.wait_for_url(shop_url)
