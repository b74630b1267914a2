"""POST /c/{session_key}/payment-attempts: the page reports a transaction its buyer's wallet sent."""

from __future__ import annotations

from typing import Annotated

import msgspec
from aiohttp import web
from msgspec import Meta

from chain_watchers import store as watch_store
from common.ids import random_id
from web.api import chain_inputs
from web.api.answers import respond
from web.api.commands import body
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.pages import session
from web.pages.quotes import accepted
from web.pages.status import PAYABLE, state
from web.reads import networks

MAX_ATTEMPTS = 20  # per session: a wallet retries a few times, a script filling the table is refused


class AttemptIn(msgspec.Struct, forbid_unknown_fields=True):
    network: Annotated[str, Meta(min_length=1, max_length=40)]
    tx_hash: Annotated[str, Meta(min_length=1, max_length=128)]


def _answer(network: str, tx_hash: str, status: str, code: int) -> web.Response:
    return respond({"object": "payment_attempt", "network": network, "tx_hash": tx_hash, "status": status}, code)


async def report(request: web.Request) -> web.Response:
    attempt = await body(request, AttemptIn)
    pool = ctx(request).pool
    found = await session.load(pool, request.match_info["session_key"])
    if found is None:
        raise ApiError(404, "session_not_found", "No such checkout session.", "session_key")
    order, s = found.order, found.session
    registry = networks.registry()
    offered = {network.slug for network, _ in accepted(registry, order.livemode, found.receive_addresses)}
    if attempt.network not in offered:
        raise ApiError(422, "network_not_accepted",
                       f"`network` must be one this checkout accepts: {', '.join(sorted(offered)) or 'none'}.",
                       "network")
    tx_hash = chain_inputs.tx_hash(registry.network(attempt.network), attempt.tx_hash, "tx_hash")
    if state(order, s, found.attempts, ctx(request).clock()) not in PAYABLE:
        raise ApiError(409, "session_not_open", "This checkout no longer takes payments.", "session_key")
    if len(found.attempts) >= MAX_ATTEMPTS:
        raise ApiError(429, "too_many_attempts", f"A checkout takes at most {MAX_ATTEMPTS} payment attempts.")
    if await watch_store.add_attempt(pool, random_id("pat"), s.session_id, order.order_id, order.merchant_id,
                                     order.livemode, attempt.network, tx_hash):
        return _answer(attempt.network, tx_hash, "reported", 201)
    existing = await pool.fetchrow(
        "SELECT session_id, status FROM payment_attempts WHERE network = $1 AND tx_hash = $2", attempt.network, tx_hash
    )
    if existing["session_id"] != s.session_id:
        raise ApiError(409, "tx_hash_already_reported", "This transaction was reported for another checkout.",
                       "tx_hash")
    return _answer(attempt.network, tx_hash, existing["status"], 200)
