"""Stripe behind the CardProvider Protocol, through the official library; where the API lives is configuration
(STRIPE_API_BASE), so tests and `service dev` talk to a localstripe process instead."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

import stripe

from cards.provider import (
    AccountRefused,
    BadSignature,
    EventFact,
    Intent,
    PaymentFact,
    ProviderRefused,
    ProviderUnavailable,
    RefundFact,
)

T = TypeVar("T")
# Faults of the provider or of the way there: the same call with the same idempotency key may succeed later.
_TRANSIENT = (stripe.APIConnectionError, stripe.APIError, stripe.RateLimitError)
# The account, whatever the request: a key Stripe does not know or revoked (401), or one it knows that may not do
# this, a restricted key or a restricted account (403).
_ACCOUNT = (stripe.AuthenticationError, stripe.PermissionError)
# Events that carry a refund object; Stripe reports a refund's later outcome by `refund.updated` (and the older
# `charge.refund.updated`), which the refund sender's own polling would also find.
REFUND_EVENTS = ("refund.created", "refund.updated", "refund.failed", "charge.refund.updated")
PAYMENT_EVENTS = ("payment_intent.succeeded",)


# The library's objects are read as plain dicts (`to_dict()`), so a field the provider leaves out is simply absent.
def _metadata(obj: dict) -> dict[str, str]:
    return {str(k): str(v) for k, v in (obj.get("metadata") or {}).items()}


def refund_fact(obj: dict) -> RefundFact:
    status = obj.get("status")
    return RefundFact(refund_id=obj["id"], status=status if status in ("succeeded", "failed", "canceled") else "pending",
                      payment_id=obj.get("payment_intent") or "", metadata=_metadata(obj),
                      reason=obj.get("failure_reason"))


def _card(obj: dict) -> dict:
    """The card of the intent's charge: in `charges` (API versions before 2022-11-15) or an expanded
    `latest_charge`; empty where the event carries neither (an id alone, or localstripe)."""
    charge = obj.get("latest_charge")
    if not isinstance(charge, dict):
        charge = next(iter((obj.get("charges") or {}).get("data") or []), None)
    card = ((charge or {}).get("payment_method_details") or {}).get("card") or {}
    return card if isinstance(card, dict) else {}


def payment_fact(obj: dict) -> PaymentFact:
    # localstripe answers no amount_received; a succeeded intent received its whole amount.
    received = obj.get("amount_received") or obj["amount"]
    card = _card(obj)
    last4 = str(card.get("last4") or "")
    return PaymentFact(payment_id=obj["id"], amount_cents=int(received), currency=str(obj["currency"]).lower(),
                       metadata=_metadata(obj), card_brand=str(card.get("brand") or "")[:20],
                       card_last4=last4 if last4.isdigit() and len(last4) == 4 else "")


def fault(exc: stripe.StripeError) -> Exception:
    """What a Stripe error means to the service: try again later, the merchant's account is refused, or this request
    is (a declined card, an insufficient balance for a refund: the account works)."""
    message = exc.user_message or str(exc)
    if isinstance(exc, _TRANSIENT):
        return ProviderUnavailable(f"{type(exc).__name__}: {message}")
    if isinstance(exc, _ACCOUNT):
        return AccountRefused(message)
    return ProviderRefused(message)


class StripeProvider:
    def __init__(self, secret_key: str, webhook_secret: str, api_base: str) -> None:
        self._http = stripe.AIOHTTPClient()
        # Retries are safe: every write carries an idempotency key.
        self._client = stripe.StripeClient(secret_key, base_addresses={"api": api_base}, http_client=self._http,
                                           max_network_retries=1)
        self._webhook_secret = webhook_secret

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except stripe.StripeError as exc:
            raise fault(exc) from None

    async def pay(self, amount_cents: int, payment_method: str, metadata: dict[str, str],
                  idempotency_key: str) -> Intent:
        pi = await self._call(lambda: self._client.v1.payment_intents.create_async(
            {"amount": amount_cents, "currency": "usd", "payment_method": payment_method, "confirm": True,
             "metadata": metadata}, {"idempotency_key": idempotency_key}))
        pi = pi.to_dict()
        error = pi.get("last_payment_error")
        return Intent(intent_id=pi["id"], client_secret=pi["client_secret"], status=pi["status"],
                      amount_cents=pi["amount"],
                      error=(error.get("message") or error.get("code")) if error else None)

    async def find_refund(self, payment_id: str, refund_id: str, attempt: int) -> RefundFact | None:
        params: dict = {"payment_intent": payment_id, "limit": 100}
        while True:
            page = await self._call(functools.partial(self._client.v1.refunds.list_async, params))
            for obj in page.data:
                fact = refund_fact(obj.to_dict())
                if fact.metadata.get("refund_id") == refund_id and fact.metadata.get("attempt") == str(attempt):
                    return fact
            if not page.has_more or not page.data:
                return None
            params = {**params, "starting_after": page.data[-1].id}

    async def create_refund(self, payment_id: str, amount_cents: int, metadata: dict[str, str],
                            idempotency_key: str) -> RefundFact:
        obj = await self._call(lambda: self._client.v1.refunds.create_async(
            {"payment_intent": payment_id, "amount": amount_cents, "metadata": metadata},
            {"idempotency_key": idempotency_key}))
        return refund_fact(obj.to_dict())

    async def refund(self, provider_refund_id: str) -> RefundFact:
        obj = await self._call(lambda: self._client.v1.refunds.retrieve_async(provider_refund_id))
        return refund_fact(obj.to_dict())

    def verify_event(self, payload: bytes, signature: str) -> EventFact:
        try:
            event = stripe.Webhook.construct_event(payload, signature, self._webhook_secret).to_dict()
        except (stripe.SignatureVerificationError, ValueError) as exc:
            raise BadSignature(str(exc)) from None
        kind, obj = event.get("type", ""), (event.get("data") or {}).get("object") or {}
        return EventFact(
            event_id=str(event.get("id", "")), kind=kind, livemode=bool(event.get("livemode")),
            payment=payment_fact(obj) if kind in PAYMENT_EVENTS else None,
            refund=refund_fact(obj) if kind in REFUND_EVENTS else None)

    async def close(self) -> None:
        await self._http.close_async()
