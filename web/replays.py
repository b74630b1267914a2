"""Repeated signatures: reads may repeat; a write's signature is spent once, unless its Idempotency-Key answers it.

Signatures are remembered for as long as their timestamp could pass the tolerance check. A write whose signature
was seen before is refused (`signature_replayed`), except one that carries an Idempotency-Key: it goes on, marked
as a repeat, and is given the answer recorded for that key; a key with no recorded answer refuses it like any
other repeat (web/edge/idempotency.py for the calls answered here, web/api/commands.py for the order actors' commands).
"""

from __future__ import annotations

from aiohttp import web

from common.config import Settings
from web.edge.app_state import REPEATED_SIGNATURE, ctx
from web.edge.errors import ApiError

IDEMPOTENCY_HEADER = "Idempotency-Key"
KEYED_METHODS = ("POST", "PATCH")  # the methods whose answers an Idempotency-Key records


def replay_ttl(settings: Settings) -> int:
    """How long a signature is remembered: as long as its timestamp could pass the tolerance check."""
    return 2 * settings.signature_tolerance_s + 60


def replayed() -> ApiError:
    return ApiError(401, "signature_replayed", "This signature was already used; sign each request afresh.", "X-Signature")


def idempotency_key(request: web.Request) -> str | None:
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is not None and not 0 < len(key) <= 255:
        raise ApiError(400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 characters.", IDEMPOTENCY_HEADER)
    return key


async def spend(request: web.Request, signature: str) -> None:
    c = ctx(request)
    if not await c.bus.pipeliner.call("SET", c.keys.signature_seen(signature), 1, "NX", "EX", replay_ttl(c.settings)):
        if request.method not in KEYED_METHODS or idempotency_key(request) is None:
            raise replayed()
        request[REPEATED_SIGNATURE] = True
