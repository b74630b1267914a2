"""POST /c/{session_key}/card-payments: the buyer pays the amount due with the card the provider's script tokenised.

The service confirms the payment with the merchant's provider; the order moves only when the provider's signed
webhook says the payment succeeded (web/api/card_provider.py), exactly as a chain payment moves on its watcher's word.
"""

from __future__ import annotations

import logging
from typing import Annotated

import msgspec
from aiohttp import web
from msgspec import Meta

from cards import accounts, amounts
from cards.provider import AccountRefused, ProviderRefused, ProviderUnavailable
from cards.providers import open_provider
from common import money
from web.api.answers import respond
from web.api.commands import body
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.pages import session
from web.pages.status import PAYABLE, state

log = logging.getLogger(__name__)


class CardPaymentIn(msgspec.Struct, forbid_unknown_fields=True):
    # What the provider's script made of the buyer's card: a card, payment method or source id, never card data.
    payment_method: Annotated[str, Meta(pattern=r"^(card|pm|src)_[A-Za-z0-9]{1,100}$")]


async def pay(request: web.Request) -> web.Response:
    paying = await body(request, CardPaymentIn)
    c = ctx(request)
    found = await session.load(c.pool, request.match_info["session_key"])
    if found is None:
        raise ApiError(404, "session_not_found", "No such checkout session.", "session_key")
    order, s = found.order, found.session
    if state(order, s, found.attempts, c.clock()) not in PAYABLE:
        raise ApiError(409, "session_not_open", "This checkout no longer takes payments.", "session_key")
    account = await accounts.load(c.pool, c.vault, order.merchant_id, order.livemode)
    if account is None:
        raise ApiError(422, "card_not_accepted", "This checkout does not take cards.", "payment_method")
    cents = amounts.charge_cents(order.residual)
    metadata = {"order_id": order.order_id, "session_id": s.session_id, "merchant_id": order.merchant_id,
                "livemode": "true" if order.livemode else "false", "order_number": str(order.order_number)}
    provider = open_provider(account, c.settings)
    try:
        # One card on one session for one amount is one payment, however often the buyer presses Pay.
        intent = await provider.pay(cents, paying.payment_method, metadata,
                                    f"checkout:{s.session_id}:{order.residual}:{paying.payment_method}")
    except ProviderUnavailable as exc:
        log.warning("card payment for %s: provider unavailable: %s", order.order_id, exc)
        raise ApiError(503, "provider_unavailable", "The card provider cannot be reached; nothing was charged. "
                                                    "Try again in a moment.") from None
    except AccountRefused as exc:
        # Not the buyer's card: the merchant's account, recorded on it and told to its owners.
        await accounts.refused(c.pool, account, str(exc), c.clock())
        log.warning("card payment for %s: the provider refused the merchant's card account: %s", order.order_id, exc)
        raise ApiError(503, "card_account_unavailable", "The shop cannot take cards at the moment; nothing was "
                                                        "charged. Pay another way or try again later.") from None
    except ProviderRefused as exc:
        raise ApiError(402, "card_declined", str(exc), "payment_method") from None
    finally:
        await provider.close()
    await accounts.worked(c.pool, account)
    return respond({"object": "card_payment", "payment_id": intent.intent_id, "status": intent.status,
                    "client_secret": intent.client_secret, "amount": money.format(amounts.micros(intent.amount_cents)),
                    "currency": "USD", "error": intent.error}, 201)
