"""Paying by card: the service confirms the payment with the provider; the provider's signed webhook, delivered by
localstripe, becomes the command that makes the order PAID, exactly as a chain payment's confirmation does."""

from __future__ import annotations

import pytest

from cards import amounts
from tests.integration.helpers import until


async def events_of(pool, order_id: str) -> list[str]:
    return [r["type"] for r in await pool.fetch("SELECT type FROM events WHERE order_id = $1 ORDER BY seq", order_id)]


async def test_a_card_payment_makes_the_order_paid_with_a_card_payment_in_its_history(card_merchant):
    created = await card_merchant.session("12.34")
    status, payment = await card_merchant.pay_by_card(created["session_key"])
    assert status == 201, payment
    assert payment["status"] == "succeeded" and payment["amount"] == "12.34" and payment["currency"] == "USD"
    paid = await until(card_merchant.client, created["order_id"], lambda o: o["status"] == "PAID", timeout=15)
    assert paid["status"] == "PAID"
    [made] = paid["payments"]
    assert made["network"] == "card" and made["tx_hash"] == payment["payment_id"] and made["amount"] == "12.34"
    assert "payment.settled" in await events_of(card_merchant.stack.pool, created["order_id"])


async def test_the_charge_is_the_amount_due_rounded_up_to_the_cent(card_merchant):
    created = await card_merchant.session("10.000001")
    status, payment = await card_merchant.pay_by_card(created["session_key"])
    assert status == 201 and payment["amount"] == "10.01"
    paid = await until(card_merchant.client, created["order_id"], lambda o: o["status"] == "PAID", timeout=15)
    assert paid["status"] == "PAID" and paid["payments"][0]["amount"] == "10.01"


@pytest.mark.parametrize(("micros", "cents"), [(1, 1), (10_000, 1), (10_001, 2), (10_000_000, 1000),
                                                (10_000_001, 1001), (9_999, 1), (0, 0)])
def test_micro_usd_to_cents_rounds_up(micros, cents):
    assert amounts.charge_cents(micros) == cents


@pytest.mark.parametrize(("micros", "cents"), [(10_000, 1), (12_340_000, 1234)])
def test_refunds_are_whole_cents(micros, cents):
    assert amounts.refund_cents(micros) == cents


def test_a_refund_finer_than_a_cent_is_refused():
    with pytest.raises(amounts.NotWholeCents):
        amounts.refund_cents(10_001)


async def test_a_checkout_without_a_card_account_refuses_cards(card_stack, card_merchant):
    other = await card_stack.merchant()
    status, created = await other.post("/b2b/v1/checkout-sessions/quick", {"amount": "5.00"})
    status, body = await card_merchant.pay_by_card(created["session_key"])
    assert status == 422 and body["error"]["code"] == "card_not_accepted"


async def test_a_malformed_card_reference_is_refused_naming_the_field(card_merchant):
    created = await card_merchant.session()
    async with card_merchant.stack.http.post(f"{card_merchant.stack.base_url}/c/{created['session_key']}/card-payments",
                                             json={"payment_method": "4242424242424242"}) as answer:
        body = await answer.json()
    assert answer.status == 422 and body["error"]["param"] == "payment_method"


async def test_the_provider_unreachable_answers_503_and_writes_nothing(card_merchant, settings, pool, redis, keys):
    from msgspec.structs import replace

    from tests.conftest import running

    created = await card_merchant.session()
    unreachable = replace(settings, stripe_api_base="http://127.0.0.1:9")
    async with running(unreachable, pool, redis, keys) as down:
        card = await card_merchant.card()
        async with down.http.post(f"{down.base_url}/c/{created['session_key']}/card-payments",
                                  json={"payment_method": card}) as answer:
            body = await answer.json()
    assert answer.status == 503 and body["error"]["code"] == "provider_unavailable"
    order = await card_merchant.order(created["order_id"])
    assert order["status"] == "PENDING" and order["payments"] == []


async def test_a_declined_card_says_why_and_leaves_the_order_pending(card_merchant):
    created = await card_merchant.session()
    status, body = await card_merchant.pay_by_card(created["session_key"], "4000000000000341")
    assert status == 402 and body["error"]["type"] == "card_error" and body["error"]["code"] == "card_declined"
    assert body["error"]["message"] == "Your card was declined." and body["error"]["param"] == "payment_method"
    order = await card_merchant.order(created["order_id"])
    assert order["status"] == "PENDING" and order["payments"] == []
