"""Paying by card in Chromium on the hosted checkout, through localstripe's stand-in for the provider's script:
the order ends PAID and the merchant's endpoint receives payment.settled."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.cards.support import VISA
from tests.e2e.support import Shop
from tests.integration.helpers import until
from tests.webhooks.support import register

THREE_D_SECURE = "4000002760003184"  # a card whose bank asks the buyer to authenticate


async def fill_card(page, number: str) -> None:
    element = page.locator("#card-element")
    for placeholder, value in (("number", number), ("exp_month", "12"), ("exp_year", "35"), ("cvc", "123"),
                               ("postal_code", "10001")):
        await element.get_by_placeholder(placeholder, exact=True).fill(value)


async def test_a_buyer_pays_by_card_on_the_hosted_page_and_the_merchant_hears_payment_settled(
        browser, card_merchant, receiver, dispatcher):
    endpoint = await receiver()
    await register(card_merchant.client, endpoint.url)
    delivering = await dispatcher()
    stop = asyncio.Event()
    running = asyncio.create_task(delivering.run(stop))
    context = await browser.new_context()
    try:
        created = await card_merchant.session("19.99")
        page = await context.new_page()
        await page.goto(f"{card_merchant.stack.base_url}/c/{created['session_key']}")
        option = page.get_by_test_id("card-option")
        await option.wait_for()
        assert "19.99 USD" in await option.inner_text()
        await fill_card(page, VISA)
        await page.get_by_test_id("card-pay").click()
        await page.wait_for_selector("#status[data-state=paid]", timeout=20_000)
        paid = await until(card_merchant.client, created["order_id"], lambda o: o["status"] == "PAID")
        assert paid["status"] == "PAID" and paid["payments"][0]["network"] == "card"
        for _ in range(200):
            types = [json.loads(r.body)["type"] for r in endpoint.requests]
            if "payment.settled" in types:
                break
            await asyncio.sleep(0.05)
        settled = next(json.loads(r.body) for r in endpoint.requests if json.loads(r.body)["type"] == "payment.settled")
        assert settled["data"]["order_id"] == created["order_id"] and settled["data"]["amount_paid"] == "19.99"
    finally:
        stop.set()
        await running
        await context.close()


async def test_a_card_that_asks_for_authentication_is_finished_by_the_providers_script(browser, card_merchant):
    context = await browser.new_context()
    try:
        created = await card_merchant.session("7.00")
        page = await context.new_page()
        await page.goto(f"{card_merchant.stack.base_url}/c/{created['session_key']}")
        await fill_card(page, THREE_D_SECURE)
        await page.get_by_test_id("card-pay").click()
        await page.get_by_role("button", name="Complete authentication").click(timeout=20_000)
        await page.wait_for_selector("#status[data-state=paid]", timeout=20_000)
        assert (await card_merchant.order(created["order_id"]))["status"] == "PAID"
    finally:
        await context.close()


async def test_a_checkout_without_a_card_account_offers_no_card(browser, card_stack):
    client = await card_stack.merchant()
    status, created = await client.post("/b2b/v1/checkout-sessions/quick", {"amount": "3.00"})
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(f"{card_stack.base_url}/c/{created['session_key']}")
        await page.get_by_test_id("status").wait_for()
        assert await page.get_by_test_id("card-option").count() == 0
    finally:
        await context.close()


@pytest.mark.parametrize("mode", ["embed", "popup"])
async def test_the_sdks_checkout_modes_offer_the_card_with_no_change_for_merchants(card_merchant, merchant_site,
                                                                                  page, mode):
    shop = Shop(card_merchant.stack, card_merchant.client, merchant_site, page, {})
    created = await card_merchant.session("4.50")
    await shop.open("esm")
    assert await shop.checkout({"sessionId": created["session_key"], "mode": mode}) is None
    await shop.event("ready")
    frame = await shop.frame()
    await frame.wait_for_selector("[data-testid=card-option]")
    await fill_card(frame, VISA)
    await frame.click("[data-testid=card-pay]")
    assert await shop.event("success", timeout=20_000) == {"sessionId": created["session_key"]}
    assert (await card_merchant.order(created["order_id"]))["status"] == "PAID"
