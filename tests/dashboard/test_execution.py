"""Paste a hash and watch the refund reach EXECUTED on the local EVM: the chain watcher (chain_watchers.runner, the
production path past its adapter) verifies the transfer while the execution screen polls its progress."""

from __future__ import annotations

import re

from playwright.async_api import expect

from tests.dashboard.support import SIZES, decode_qr, execute_now, last_part, make_staff, open_dialog, sign_in
from tests.watchers.conftest import bus, shop, watchers  # noqa: F401  (the local chain and its watcher)


async def test_a_pasted_hash_is_verified_and_the_screen_follows_it_to_executed(
        page, stack, shop, screenshots):  # noqa: F811
    staff = await make_staff(stack, shop.client)
    order_id = (await shop.paid("10.00"))["order_id"]
    token = shop.chain.token.address
    await sign_in(page, staff)

    dialog = await open_dialog(page, staff, order_id)
    await execute_now(dialog, "3.00", f"local|{token}", shop.buyer, "one bag missing")
    await page.wait_for_url(re.compile(r".*/dashboard/test/refunds/re_[0-9a-f]+$"))
    refund_id = last_part(page.url)

    # The wallet link a phone would scan: EIP-681, the token contract, the chain id, the customer, base units.
    eip681 = f"ethereum:{token}@{shop.network.chain_id}/transfer?address={shop.buyer}&uint256=3000000"
    assert await decode_qr(page.get_by_test_id("payout-qr").locator("svg")) == eip681

    tx_hash = await shop.send(shop.wallet, shop.buyer, "3.00")
    await page.get_by_label("Transaction hash on Local EVM").fill(tx_hash)
    await page.get_by_role("button", name="Verify").click()
    await expect(page.get_by_test_id("flash")).to_contain_text("Transaction received")
    progress = page.get_by_test_id("progress-text")
    await expect(progress).to_have_text("0 of 3 confirmations")

    await shop.tick()  # the transfer's own block: one confirmation; the page's poll shows it without a reload
    await expect(progress).to_have_text("1 of 3 confirmations")
    await shop.mine(1)
    await shop.tick()
    await expect(progress).to_have_text("2 of 3 confirmations")
    for size, viewport in SIZES.items():
        await page.set_viewport_size(viewport)
        await page.screenshot(path=screenshots / f"execution-local-verifying-{size}.png", full_page=True)

    await shop.mine(1)
    assert (await shop.tick()).refunds == 1
    await expect(page.get_by_test_id("executed")).to_be_visible()  # the refund changed state: the page reloaded
    await expect(page.locator("#refund-status")).to_have_text("EXECUTED")
    await expect(progress).to_have_text("Verified: 3 of 3 confirmations.")
    refund = await shop.read_refund(refund_id)
    assert refund["status"] == "EXECUTED" and refund["execution"]["tx_hash"] == tx_hash
    assert (await shop.order(order_id))["amount_refunded"] == "3.00"
    for size, viewport in SIZES.items():
        await page.set_viewport_size(viewport)
        await page.screenshot(path=screenshots / f"execution-local-executed-{size}.png", full_page=True)


async def test_a_hash_the_refund_cannot_use_is_refused_on_the_screen(page, stack, shop):  # noqa: F811
    staff = await make_staff(stack, shop.client)
    order_id = (await shop.paid("10.00"))["order_id"]
    refund_id = await shop.refund(order_id, "3.00")
    await sign_in(page, staff)
    await page.goto(staff.url(f"/refunds/{refund_id}"))
    await page.get_by_label("Transaction hash on Local EVM").fill("not a hash")
    await page.get_by_role("button", name="Verify").click()
    await expect(page.get_by_test_id("tx-error")).to_contain_text("is not a local transaction hash")
    await expect(page.get_by_label("Transaction hash on Local EVM")).to_have_value("not a hash")
    assert (await shop.read_refund(refund_id))["transactions"] == []
