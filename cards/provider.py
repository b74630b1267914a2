"""The card provider contract: the facts an adapter reports and the one Protocol every provider implements."""

from __future__ import annotations

from typing import Literal, Protocol

import msgspec


class ProviderUnavailable(Exception):
    """The provider could not be reached or answered with a fault of its own: try again later."""


class ProviderRefused(Exception):
    """The provider understood the request and refused it (a declined card, a refund beyond the balance): retrying
    changes nothing."""


class AccountRefused(Exception):
    """The provider refused the merchant's account itself (a revoked or wrong secret key, a restricted account):
    no request of that account can work until the merchant fixes it, so it is the account's error, recorded on it
    and told to its owners, not a refusal of this one payment or refund."""


class BadSignature(ValueError):
    """A webhook whose signature does not verify against the merchant's webhook secret."""


class Intent(msgspec.Struct, frozen=True, kw_only=True):
    """A card payment as the provider left it after the service confirmed it: `requires_action` asks the buyer's
    browser to finish it (3-D Secure) with the provider's script and the client secret."""

    intent_id: str
    client_secret: str
    status: str
    amount_cents: int
    error: str | None = None  # why the card was declined, in the provider's words


class PaymentFact(msgspec.Struct, frozen=True, kw_only=True):
    """A payment the provider says succeeded, with what the service put in its metadata."""

    payment_id: str
    amount_cents: int
    currency: str
    metadata: dict[str, str]
    card_brand: str = ""  # for the buyer's receipt, where the provider's event carries the card's details
    card_last4: str = ""


RefundStatus = Literal["pending", "succeeded", "failed", "canceled"]


class RefundFact(msgspec.Struct, frozen=True, kw_only=True):
    refund_id: str  # the provider's
    status: RefundStatus
    payment_id: str
    metadata: dict[str, str]
    reason: str | None = None


class EventFact(msgspec.Struct, frozen=True, kw_only=True):
    """A verified provider webhook: its id, its kind and the payment or refund it reports, if any."""

    event_id: str
    kind: str
    livemode: bool
    payment: PaymentFact | None = None
    refund: RefundFact | None = None


class CardProvider(Protocol):
    """One provider account (a merchant's keys) behind one interface; it reports facts and never decides states."""

    async def pay(self, amount_cents: int, payment_method: str, metadata: dict[str, str],
                  idempotency_key: str) -> Intent:
        """Create and confirm a payment with the card the buyer's browser tokenised."""
        ...

    async def find_refund(self, payment_id: str, refund_id: str, attempt: int) -> RefundFact | None:
        """The provider refund made for this refund and attempt, if one exists (a crash lost its answer)."""
        ...

    async def create_refund(self, payment_id: str, amount_cents: int, metadata: dict[str, str],
                            idempotency_key: str) -> RefundFact: ...

    async def refund(self, provider_refund_id: str) -> RefundFact: ...

    def verify_event(self, payload: bytes, signature: str) -> EventFact:
        """Raise BadSignature, else the event's facts."""
        ...

    async def close(self) -> None: ...
