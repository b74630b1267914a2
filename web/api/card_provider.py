"""POST /providers/stripe/webhooks/{merchant_id}: the merchant's card provider reports payments and refunds.

The signature is checked against the merchant's own webhook secret before anything is read; a verified event
about one of the service's payments becomes a command on its order's stream, the same one a chain watcher sends.
"""

from __future__ import annotations

import logging

from aiohttp import web

from cards import accounts
from cards.events import command_of
from cards.provider import BadSignature, EventFact
from cards.providers import open_provider
from web.api.answers import respond
from web.api.commands import ask, checked
from web.edge.app_state import ctx
from web.edge.errors import ApiError

log = logging.getLogger(__name__)
RETRY_LATER = "The event was accepted but not applied in time; the provider will deliver it again."


async def _verified(request: web.Request, merchant_id: str) -> tuple[EventFact, bool]:
    """The event and the mode of the account whose secret signed it; should both modes share a secret, the account
    of the mode the event states."""
    c = ctx(request)
    payload, signature = await request.read(), request.headers.get("Stripe-Signature", "")
    verified = None
    for account in await accounts.both_modes(c.pool, c.vault, merchant_id):
        if account.provider != "stripe":
            continue
        provider = open_provider(account, c.settings)
        try:
            fact = provider.verify_event(payload, signature)
        except BadSignature:
            continue
        finally:
            await provider.close()
        if fact.livemode == account.livemode:
            return fact, account.livemode
        verified = verified or (fact, account.livemode)
    if verified is not None:
        return verified
    raise ApiError(400, "invalid_signature", "Stripe-Signature does not verify against the merchant's webhook secret.",
                   "Stripe-Signature")


def _ignored(fact: EventFact, why: str) -> web.Response:
    log.info("card webhook %s (%s) ignored: %s", fact.event_id, fact.kind, why)
    return respond({"received": True, "applied": False})


async def receive(request: web.Request) -> web.Response:
    merchant_id = request.match_info["merchant_id"]
    fact, livemode = await _verified(request, merchant_id)
    c = ctx(request)
    envelope = command_of(fact, merchant_id, livemode, c.clock())
    if envelope is None:
        return _ignored(fact, "not a payment or refund of this merchant's orders")
    order_id = envelope.command.order_id
    known = await c.pool.fetchval("SELECT true FROM orders WHERE order_id = $1 AND merchant_id = $2 AND livemode = $3",
                                  order_id, merchant_id, livemode)
    if not known:
        return _ignored(fact, f"no order {order_id} of this merchant")  # answered 200: the provider stops retrying
    try:
        await ask(request, envelope.__class__(command_id=envelope.command_id, command=checked(envelope.command)),
                  timeout_message=RETRY_LATER)
    except ApiError as exc:
        if exc.status >= 500:
            raise  # 503/504 naming the command: the provider delivers the event again
        return _ignored(fact, f"refused by the order: {exc.message}")
    return respond({"received": True, "applied": True})


ROUTE_DEFS = [web.post("/providers/stripe/webhooks/{merchant_id}", receive)]
