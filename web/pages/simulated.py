"""POST /c/{session_key}/simulated-payments: a test-mode checkout page pays its own order, in full, in part or
late, through the very command the test helper and the chain watchers send. Refused for a live session."""

from __future__ import annotations

import msgspec
from aiohttp import web

from actors import messages as m
from chain_watchers.registry import SIMULATED_TX
from common.ids import random_id
from web.api.answers import respond
from web.api.commands import amount, ask, body, checked
from web.edge import forms, request_ids
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.pages import session
from web.pages.checkout import required_confirmations
from web.pages.quotes import accepted
from web.pages.status import status_json
from web.reads import networks


class SimulatedPaymentIn(msgspec.Struct, forbid_unknown_fields=True):
    amount: str


def _where(found: session.Checkout) -> tuple[str, str]:
    """The network and token the payment is recorded on: the page's first way to pay, else the first test network
    with a token (a merchant with no receive address yet can still try the flow)."""
    registry = networks.registry()
    candidates = [net for net, _ in accepted(registry, False, found.receive_addresses)] + list(registry.of_mode(False))
    net = next(n for n in candidates if any(c.address for c in n.stablecoins))
    return net.slug, next(c.address for c in net.stablecoins if c.address)


async def simulate(request: web.Request) -> web.Response:
    key = request.match_info["session_key"]
    found = await session.load(ctx(request).pool, key)
    if found is None:
        raise ApiError(404, "session_not_found", "No such checkout session.", "session_key")
    order = found.order
    if order.livemode:
        raise ApiError(403, "test_mode_only", "Only a test-mode checkout can simulate a payment.", "session_key")
    forms.same_origin(request)
    form = await body(request, SimulatedPaymentIn)  # from the page's script (web/static/simulate.js)
    network, token_address = _where(found)
    command = m.ConfirmPayment(
        order_id=order.order_id, merchant_id=order.merchant_id, livemode=False, at=ctx(request).clock(),
        payment_id=random_id("pay"), network=network, tx_hash=random_id(SIMULATED_TX), token_address=token_address,
        amount=amount(form.amount, "amount"),
    )
    envelope = m.Envelope(command_id=random_id("cmd"), command=checked(command), request_id=request_ids.of(request))
    await ask(request, envelope, timeout_message="The payment is taking long; reload the page to see its state.")
    reloaded = await session.load(ctx(request).pool, key, with_merchant=False)
    return respond(status_json(reloaded.order, reloaded.session, reloaded.attempts, ctx(request).clock(),
                               required_confirmations), status=201)
