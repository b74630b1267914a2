"""The execution screen on each network family (docs/spec.md §4.1 rule 6), and screenshots of the pages people look
at, at a desktop and a phone width, saved to artifacts/screenshots/dashboard/."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from common import money
from tests.dashboard.support import SIZES, decode_qr, sign_in
from tests.e2e.support import console_errors, receive_addresses
from tests.integration.helpers import pay, quick
from web.api import chain_inputs
from web.dashboard import details
from web.reads import networks

CUSTOMER = receive_addresses("customer")
FAMILIES = {"evm": "sepolia", "solana": "solana-devnet", "tron": "tron-nile", "ton": "ton-testnet"}
ITEMS = [{"name": "Ethiopia Guji, 250 g", "unit_amount": "14.50", "quantity": 2},
         {"name": "Paper filters (100)", "unit_amount": "4.25", "quantity": 1}]


async def refund_on(client, order_id: str, network: str, amount: str = "3.25") -> str:
    coin = networks.registry().network(network).stablecoins[0]
    status, refund = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds", {
        "order_id": order_id, "amount": amount, "reason": "returned", "refund_to_address": CUSTOMER[network],
        "refund_network": network, "refund_token_address": coin.address})
    assert status == 201, refund
    return refund["refund_id"]


async def rich_order(client) -> str:
    """A paid order with a refund, a refund link and a timeline to show."""
    order_id = (await quick(client, line_items=ITEMS, external_ref="A-1001", amount=None))["order_id"]
    assert (await pay(client, order_id, "33.25"))[0] == 201
    await refund_on(client, order_id, "sepolia", "5.00")
    status, _ = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refund-requests",
                                  {"ref_type": "order_id", "ref_value": order_id, "amount": "8.00"})
    assert status == 201
    return order_id


@pytest.mark.parametrize("family", FAMILIES)
async def test_execution_screen_shows_the_transfer_and_the_networks_own_link(page, staff, screenshots, family):
    network = FAMILIES[family]
    order_id = (await quick(staff.client, amount="10.00"))["order_id"]
    assert (await pay(staff.client, order_id, "10.00"))[0] == 201
    refund_id = await refund_on(staff.client, order_id, network)
    await sign_in(page, staff)
    errors = console_errors(page)
    await page.goto(staff.url(f"/refunds/{refund_id}"))
    send = details.payout(network, chain_inputs.address(chain_inputs.network(network, "n"), CUSTOMER[network], "a"),
                          networks.registry().network(network).stablecoins[0].address, money.parse("3.25"))
    await expect(page.get_by_test_id("send-address")).to_have_text(send["address"])
    await expect(page.get_by_test_id("send-amount")).to_have_value("3.25")
    await expect(page.get_by_test_id("send-network")).to_have_text(details.name(network))
    if family == "tron":
        assert send["link"] is None
        await expect(page.get_by_test_id("no-qr")).to_contain_text("type the amount by hand")
        assert await page.get_by_test_id("payout-qr").count() == 0
    else:
        scheme = {"evm": "ethereum:", "solana": "solana:", "ton": "ton://transfer/"}[family]
        assert send["link"].startswith(scheme)
        assert await decode_qr(page.get_by_test_id("payout-qr").locator("svg")) == send["link"]
        await expect(page.get_by_test_id("send-link")).to_have_text(send["link"])
    for size, viewport in SIZES.items():
        await page.set_viewport_size(viewport)
        await page.screenshot(path=screenshots / f"execution-{family}-{size}.png", full_page=True)
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
async def test_order_page_and_dialog_screenshots(page, staff, screenshots, size):
    order_id = await rich_order(staff.client)
    await page.set_viewport_size(SIZES[size])
    await sign_in(page, staff)
    errors = console_errors(page)
    await page.goto(staff.url(f"/orders/{order_id}"))
    payment = (await staff.client.get(f"/b2b/v1/orders/{order_id}"))[1]["payments"][0]
    # The test helper's made-up transaction is shown, but links to no explorer: no chain holds it.
    payments = page.get_by_test_id("payments")
    await expect(payments).to_contain_text(payment["tx_hash"])
    await expect(payments.get_by_role("link", name=payment["tx_hash"])).to_have_count(0)
    timeline = page.get_by_test_id("timeline").locator(".event-type")
    await expect(timeline).to_have_text(["order.created", "checkout_session.created", "payment.received",
                                         "checkout_session.completed", "payment.settled", "payment.refund.requested",
                                         "payment.refund.approved", "refund_request.created"])
    await expect(page.get_by_test_id("amount-refundable")).to_have_text("28.25")
    await page.screenshot(path=screenshots / f"order-{size}.png", full_page=True)
    await page.get_by_test_id("issue-refund").click()
    dialog = page.get_by_test_id("refund-dialog")
    await expect(dialog).to_be_visible()
    await page.screenshot(path=screenshots / f"dialog-execute-{size}.png")
    await dialog.get_by_text("Send the customer a link").click()
    await page.screenshot(path=screenshots / f"dialog-link-form-{size}.png")
    await dialog.get_by_role("button", name="Create link").click()
    await expect(page.get_by_test_id("refund-link-result")).to_be_visible()
    await page.screenshot(path=screenshots / f"dialog-link-{size}.png")
    assert errors == []


# What each screen must show of rich_order: its heading, and a part of the page that holds the order's facts.
SCREENS = {"orders": ("Orders", "orders", "A-1001"), "review": ("Review", "tokens", "up to 8.00 USD"),
           "settings": ("Settings", "addresses", "Receive addresses")}


@pytest.mark.parametrize("size", SIZES)
async def test_list_review_and_settings_screenshots(page, staff, screenshots, size):
    await rich_order(staff.client)
    await page.set_viewport_size(SIZES[size])
    await sign_in(page, staff)
    errors = console_errors(page)
    for name, (heading, part, text) in SCREENS.items():
        await page.goto(staff.url(f"/{name}"))
        await expect(page.get_by_role("heading", level=1)).to_have_text(heading)
        await expect(page.get_by_test_id(part)).to_be_visible()
        await expect(page.get_by_test_id(part)).to_contain_text(text)
        await page.screenshot(path=screenshots / f"{name}-{size}.png", full_page=True)
    assert errors == []
