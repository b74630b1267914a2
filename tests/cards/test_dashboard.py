"""The dashboard: connecting the card account of the mode, and a card refund issued from an order, sent to the
provider by the service and shown executed (or refused, with a retry)."""

from __future__ import annotations

from playwright.async_api import expect

from tests.cards.support import CardMerchant
from tests.dashboard.support import sign_in
from tests.integration.helpers import until


async def test_the_settings_screen_connects_and_disconnects_the_card_account(page, staff):
    await sign_in(page, staff)
    await page.goto(staff.url("/settings"))
    card = page.get_by_test_id("card-connect")
    await card.get_by_test_id("card-secret-key").fill("sk_live_51dashboard")  # a live key in test mode
    await card.get_by_test_id("card-publishable-key").fill("pk_test_51dashboard")
    await card.get_by_test_id("card-webhook-secret").fill("whsec_dashboard")
    await card.get_by_test_id("card-save").click()
    await expect(page.get_by_test_id("card-error")).to_contain_text("must be a test key in test mode")
    status, read = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/settings")
    assert read["card"] is None

    card = page.get_by_test_id("card-connect")
    await card.get_by_test_id("card-secret-key").fill("sk_test_51dashboard")
    await card.get_by_test_id("card-publishable-key").fill("pk_test_51dashboard")
    await card.get_by_test_id("card-webhook-secret").fill("whsec_dashboard")
    await card.get_by_test_id("card-save").click()
    await expect(page.get_by_test_id("flash")).to_have_text("Card account connected.")
    await expect(page.get_by_test_id("card-connected")).to_contain_text("pk_test_51dashboard")
    assert "sk_test_51dashboard" not in await page.content()
    shown = await page.get_by_test_id("card-webhook-url").input_value()  # BASE_URL's origin (port 0 in tests)
    assert shown.endswith(f"/providers/stripe/webhooks/{staff.merchant_id}")
    status, read = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/settings")
    assert read["card"] == {"provider": "stripe", "publishable_key": "pk_test_51dashboard", "connected": True}

    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_test_id("card-disconnect").click()
    await expect(page.get_by_test_id("flash")).to_have_text("Card account disconnected.")
    status, read = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/settings")
    assert read["card"] is None


async def test_a_card_refund_issued_in_the_dashboard_is_sent_by_the_service_and_executed(page, card_merchant, sender):
    from tests.dashboard.support import make_staff

    staff = await make_staff(card_merchant.stack, card_merchant.client)
    paid = await card_merchant.paid_order("12.00")
    await sign_in(page, staff)
    await page.goto(staff.url(f"/orders/{paid['order_id']}"))
    await page.get_by_role("link", name="Issue refund").click()
    dialog = page.get_by_test_id("refund-dialog")
    await dialog.get_by_test_id("refund-amount").fill("5.00")
    await expect(dialog.get_by_test_id("refund-destination")).to_have_value("card|")
    await dialog.get_by_test_id("refund-submit").click()
    await expect(page.get_by_test_id("flash")).to_contain_text("the service sends it to your card provider")
    await expect(page.get_by_test_id("card-refund")).to_be_visible()
    assert await page.get_by_test_id("submit-tx").count() == 0  # no hash to paste on the card rail
    await sender.run_once()
    await page.reload()
    [provider_refund] = await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"])
    await expect(page.get_by_test_id("executed")).to_contain_text(provider_refund.id)
    done = await until(card_merchant.client, paid["order_id"], lambda o: o["status"] == "PARTIALLY_REFUNDED")
    assert done["amount_refunded"] == "5.00"


async def test_a_refused_card_refund_shows_why_and_is_retried_from_the_dashboard(page, card_merchant: CardMerchant,
                                                                                sender):
    from actors import messages as m
    from tests.dashboard.support import make_staff

    staff = await make_staff(card_merchant.stack, card_merchant.client)
    paid = await card_merchant.paid_order()
    status, created = await card_merchant.client.post(f"/b2b/v1/merchants/{card_merchant.merchant_id}/refunds",
                                                      {"order_id": paid["order_id"], "amount": "1.00"})
    refused = m.RecordCardRefund(order_id=paid["order_id"], merchant_id=card_merchant.merchant_id, livemode=False,
                                 at=card_merchant.stack.clock(), refund_id=created["refund_id"], provider_refund_id="",
                                 status="failed", reason="Your card's issuer declined the refund")
    assert (await sender.bus.ask(m.Envelope(command_id=f"test-refused-{created['refund_id']}", command=refused))).ok
    await sign_in(page, staff)
    await page.goto(staff.url(f"/refunds/{created['refund_id']}"))
    await expect(page.get_by_test_id("card-refund-failure")).to_contain_text("issuer declined the refund")
    await page.get_by_test_id("card-refund-retry").click()
    await expect(page.get_by_test_id("flash")).to_contain_text("sent to the card provider again")
    await sender.run_once()
    await page.reload()
    await expect(page.get_by_test_id("executed")).to_be_visible()
