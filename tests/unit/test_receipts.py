"""Receipt keys (web/api/receipts.py) and the card details a provider's event gives the receipt."""

from __future__ import annotations

import pytest

from accounts.receipt_keys import order_id_of, receipt_key
from cards.stripe_provider import payment_fact

KEY, OTHER = b"k" * 32, b"o" * 32
ORDER = "ord_019ab0c0ffee0123456789abcdef01234567"


def test_a_receipt_key_names_its_order_under_the_key_that_made_it_only():
    made = receipt_key(KEY, ORDER)
    assert made.startswith("rcpt_") and order_id_of(KEY, made) == ORDER
    assert order_id_of(OTHER, made) is None
    assert receipt_key(KEY, ORDER) == made and receipt_key(KEY, ORDER + "0") != made


@pytest.mark.parametrize("wrong", ["", "rcpt_", "rcpt_" + "0" * 32 + "_" + ORDER, ORDER, "rcpt_xyz_ord_1",
                                   receipt_key(KEY, ORDER) + "/..", receipt_key(KEY, ORDER).upper()])
def test_keys_the_service_did_not_make_name_nothing(wrong):
    assert order_id_of(KEY, wrong) is None


def _intent(**extra) -> dict:
    return {"id": "pi_1", "amount": 1000, "currency": "usd", "metadata": {}, **extra}


@pytest.mark.parametrize("intent,brand,last4", [
    (_intent(charges={"data": [{"payment_method_details": {"card": {"brand": "visa", "last4": "4242"}}}]}),
     "visa", "4242"),
    (_intent(latest_charge={"payment_method_details": {"card": {"brand": "amex", "last4": "0005"}}}), "amex", "0005"),
    (_intent(latest_charge="ch_1"), "", ""),  # an id alone: the event does not say
    (_intent(), "", ""),
    (_intent(latest_charge={"payment_method_details": {"card": {"brand": "visa", "last4": "<b>"}}}), "visa", ""),
])
def test_the_card_of_a_payment_comes_from_the_intent_where_it_is_given(intent, brand, last4):
    fact = payment_fact(intent)
    assert (fact.card_brand, fact.card_last4) == (brand, last4)
