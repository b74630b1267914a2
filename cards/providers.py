"""The adapter of a merchant's account, by its provider's name."""

from __future__ import annotations

from cards.accounts import CardAccount
from cards.provider import CardProvider
from common.config import Settings


def open_provider(account: CardAccount, settings: Settings) -> CardProvider:
    if account.provider == "stripe":
        from cards.stripe_provider import StripeProvider  # the client library loads only where cards are used

        return StripeProvider(account.secret_key, account.webhook_secret, settings.stripe_api_base)
    raise ValueError(f"unknown card provider {account.provider!r}")
