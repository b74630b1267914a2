"""What the card tests share: a merchant with a card account, the buyer's card as the provider's script makes it,
and the provider's own view of payments and refunds, all through the `stripe` library as the service uses it."""

from __future__ import annotations

import contextlib
import json
import time

import stripe

from cards.stripe_provider import StripeProvider
from tests.integration.helpers import QUICK, order, until

VISA = "4242424242424242"


class CardMerchant:
    def __init__(self, stack, client, api_base: str, webhook_secret: str):
        self.stack, self.client, self.api_base, self.webhook_secret = stack, client, api_base, webhook_secret

    @property
    def merchant_id(self) -> str:
        return self.client.merchant_id

    def provider(self) -> StripeProvider:
        return StripeProvider("sk_test_anything", self.webhook_secret, self.api_base)

    @contextlib.asynccontextmanager
    async def stripe(self):
        """The provider's API as the buyer's browser and the tests see it, through the official library."""
        http = stripe.AIOHTTPClient()
        try:
            yield stripe.StripeClient("sk_test_anything", base_addresses={"api": self.api_base}, http_client=http)
        finally:
            await http.close_async()

    async def session(self, amount: str = "10.00") -> dict:
        status, created = await self.client.post(QUICK, {"amount": amount})
        assert status == 201, created
        return created

    async def card(self, number: str = VISA) -> str:
        """What the provider's script sends the page for the buyer's card: the id of a tokenised card."""
        async with self.stripe() as client:
            token = await client.v1.tokens.create_async(
                {"card": {"number": number, "exp_month": 12, "exp_year": 2035, "cvc": "123"}})
        return token.card.id

    async def pay_by_card(self, session_key: str, number: str = VISA) -> tuple[int, dict]:
        card = await self.card(number)
        async with self.stack.http.post(f"{self.stack.base_url}/c/{session_key}/card-payments",
                                        json={"payment_method": card}) as answer:
            return answer.status, await answer.json()

    async def paid_order(self, amount: str = "10.00") -> dict:
        created = await self.session(amount)
        status, body = await self.pay_by_card(created["session_key"])
        assert status == 201 and body["status"] == "succeeded", body
        paid = await until(self.client, created["order_id"], lambda o: o["status"] == "PAID", timeout=15)
        assert paid["status"] == "PAID", paid
        return paid

    async def order(self, order_id: str) -> dict:
        return await order(self.client, order_id)

    async def provider_refunds(self, payment_id: str) -> list:
        async with self.stripe() as client:
            return list((await client.v1.refunds.list_async({"payment_intent": payment_id, "limit": 100})).data)

    def signed(self, event: dict, secret: str | None = None) -> tuple[bytes, dict[str, str]]:
        """An event signed as the provider signs it (Stripe-Signature: t=...,v1=...)."""
        payload = json.dumps(event).encode()
        now = int(time.time())
        signature = stripe.WebhookSignature._compute_signature(f"{now}.{payload.decode()}",
                                                               secret or self.webhook_secret)
        return payload, {"Stripe-Signature": f"t={now},v1={signature}", "Content-Type": "application/json"}

    async def deliver(self, payload: bytes, headers: dict[str, str], merchant_id: str | None = None) -> tuple[int, dict]:
        url = f"{self.stack.base_url}/providers/stripe/webhooks/{merchant_id or self.merchant_id}"
        async with self.stack.http.post(url, data=payload, headers=headers) as answer:
            return answer.status, await answer.json()
