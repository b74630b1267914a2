"""A provider's error is the merchant's account's (a refused key, a restricted account: recorded on the account and
told to its owners), this one request's (a declined card, a refund beyond the balance), or a fault to wait out."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
import stripe

from cards.provider import AccountRefused, ProviderRefused, ProviderUnavailable
from cards.stripe_provider import fault
from notify import kinds

ACCOUNT = [
    stripe.AuthenticationError("Invalid API Key provided: sk_test_****abcd", http_status=401),
    stripe.AuthenticationError("Expired API Key provided: rk_live_****abcd", http_status=401, code="api_key_expired"),
    stripe.PermissionError("The provided key does not have the required permissions for this endpoint.",
                           http_status=403),
    stripe.PermissionError("Your account cannot currently make live charges.", http_status=403,
                           code="account_invalid"),
]
REQUEST = [
    stripe.InvalidRequestError("Insufficient funds in Stripe account.", None, code="balance_insufficient",
                               http_status=400),
    stripe.InvalidRequestError("Charge ch_1 has already been refunded.", None, code="charge_already_refunded",
                               http_status=400),
    stripe.CardError("Your card was declined.", None, "card_declined", http_status=402),
    stripe.IdempotencyError("Keys for idempotent requests can only be used with the same parameters.", http_status=400),
]
TRANSIENT = [
    stripe.APIConnectionError("Could not connect to Stripe."),
    stripe.APIError("Something went wrong on Stripe's end.", http_status=500),
    stripe.RateLimitError("Too many requests.", http_status=429),
]


@pytest.mark.parametrize("error", ACCOUNT, ids=lambda e: type(e).__name__)
def test_a_refused_key_or_restricted_account_is_the_accounts_error(error):
    refused = fault(error)
    assert type(refused) is AccountRefused and str(refused) == str(error.user_message or error)


@pytest.mark.parametrize("error", REQUEST, ids=lambda e: e.code or type(e).__name__)
def test_a_refused_request_is_not_an_account_error(error):
    refused = fault(error)
    assert type(refused) is ProviderRefused and not isinstance(refused, AccountRefused)


@pytest.mark.parametrize("error", TRANSIENT, ids=lambda e: type(e).__name__)
def test_a_provider_fault_is_waited_out(error):
    assert type(fault(error)) is ProviderUnavailable


def test_each_error_episode_is_its_own_notice_pointing_at_the_modes_settings():
    began = datetime(2025, 3, 1, 10, 0, 0, 250_000, tzinfo=timezone.utc)
    first = kinds.card_account_error("cac_1", "mer_1", True, "stripe", "Invalid API Key provided", began)
    same = kinds.card_account_error("cac_1", "mer_1", True, "stripe", "Invalid API Key provided (again)", began)
    # Ended by a call that worked and back within the same second: a new episode all the same.
    again = kinds.card_account_error("cac_1", "mer_1", True, "stripe", "Invalid API Key provided",
                                     began + timedelta(milliseconds=500))
    assert first.kind is kinds.Kind.CARD_ACCOUNT_ERROR and first.path == "/live/settings"
    assert same.source_id == first.source_id and again.source_id != first.source_id
    assert "Since 2025-03-01T10:00:00Z Stripe refuses" in first.body
    assert "Invalid API Key provided" in first.body and "live" in first.title
