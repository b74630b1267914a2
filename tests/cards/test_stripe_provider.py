"""The Stripe adapter against localstripe: the facts it reports and how it names the provider's faults."""

from __future__ import annotations

import json
import time

import pytest
import stripe

from cards.provider import BadSignature, CardProvider, ProviderRefused, ProviderUnavailable
from cards.stripe_provider import StripeProvider

WHSEC = "whsec_adapter"


@pytest.fixture
async def adapter(localstripe):
    provider: CardProvider = StripeProvider("sk_test_adapter", WHSEC, localstripe.api_base)
    yield provider
    await provider.close()


async def card(localstripe, number: str = "4242424242424242") -> str:
    http = stripe.AIOHTTPClient()
    try:
        client = stripe.StripeClient("sk_test_adapter", base_addresses={"api": localstripe.api_base}, http_client=http)
        token = await client.v1.tokens.create_async(
            {"card": {"number": number, "exp_month": 12, "exp_year": 2035, "cvc": "123"}})
    finally:
        await http.close_async()
    return token.card.id


async def test_a_payment_and_its_refund_are_found_again_by_the_refunds_own_id(adapter, localstripe):
    intent = await adapter.pay(1234, await card(localstripe), {"order_id": "ord_x"}, "adapter-pay-1")
    assert intent.status == "succeeded" and intent.amount_cents == 1234 and intent.client_secret
    assert await adapter.find_refund(intent.intent_id, "re_adapter", 0) is None
    made = await adapter.create_refund(intent.intent_id, 500, {"refund_id": "re_adapter", "attempt": "0"}, "re_adapter")
    assert made.status == "succeeded" and made.payment_id == intent.intent_id
    found = await adapter.find_refund(intent.intent_id, "re_adapter", 0)
    assert found is not None and found.refund_id == made.refund_id
    assert await adapter.find_refund(intent.intent_id, "re_adapter", 1) is None  # another attempt's is its own
    assert (await adapter.refund(made.refund_id)).status == "succeeded"


async def test_a_declined_card_is_a_refusal_in_the_providers_words(adapter, localstripe):
    with pytest.raises(ProviderRefused, match="declined"):  # a card error at confirmation, as Stripe answers it
        await adapter.pay(1000, await card(localstripe, "4000000000000341"), {}, "adapter-declined")


async def test_an_unreachable_provider_is_unavailable_not_refused():
    down = StripeProvider("sk_test_adapter", WHSEC, "http://127.0.0.1:9")
    try:
        with pytest.raises(ProviderUnavailable):
            await down.refund("re_nothing")
    finally:
        await down.close()


def test_events_are_verified_with_the_merchants_secret(adapter):
    event = {"id": "evt_1", "object": "event", "type": "payment_intent.succeeded", "livemode": False,
             "data": {"object": {"id": "pi_1", "object": "payment_intent", "amount": 700, "currency": "usd",
                                 "status": "succeeded", "metadata": {"order_id": "ord_1"}}}}
    payload = json.dumps(event).encode()
    now = int(time.time())
    good = stripe.WebhookSignature._compute_signature(f"{now}.{payload.decode()}", WHSEC)
    fact = adapter.verify_event(payload, f"t={now},v1={good}")
    assert fact.payment.payment_id == "pi_1" and fact.payment.amount_cents == 700 and fact.refund is None
    for signature in ("", f"t={now},v1={'0' * 64}", f"t={now - 3600},v1={good}"):
        with pytest.raises(BadSignature):
            adapter.verify_event(payload, signature)
