"""Verifies signed B2B requests (docs/spec.md §5); each refusal has its own code."""

from __future__ import annotations

import re

from aiohttp import web

from accounts import merchants
from common import faults, logs
from web.edge import rate_limits
from web.edge.app_state import CALLER, ONE_COMMAND, REPEATED_SIGNATURE, SIGNED_AT_MS, UNSPENT_SIGNATURE, ctx
from web.edge.errors import ApiError
from web.edge.idempotency import idempotency_key
from web.edge.signing import matches, replay_ttl, replayed

PUBLIC_PATHS = {"/b2b/v1/openapi.json"}
MILLISECONDS_FROM = 10**11  # an X-Timestamp this large is milliseconds: in seconds it is past the year 5000
SAFE_METHODS = ("GET", "HEAD")  # reads: repeating one changes nothing, so a repeated signature is no threat
KEYED_METHODS = ("POST", "PATCH")  # the methods whose answers an Idempotency-Key records
_PUBLIC_KEY = re.compile(r"^pk_(live|test)_[A-Za-z0-9]+$")
_HEX = re.compile(r"^[0-9a-f]{64}$")


def _header(request: web.Request, name: str) -> str:
    value = request.headers.get(name)
    if not value:
        raise ApiError(401, "missing_header", f"The {name} header is required.", name)
    return value


async def _api_key(request: web.Request, public_key: str):
    c = ctx(request)
    found, api_key = c.key_cache.get(public_key)
    if found:
        return api_key
    try:
        api_key = await merchants.lookup_key(c.pool, c.vault, public_key)
    except faults.UNAVAILABLE:
        api_key = c.key_cache.stale(public_key)
        if api_key is None:
            raise
        return api_key
    c.key_cache.put(public_key, api_key)
    return api_key


def _milliseconds(timestamp: int) -> int:
    """The timestamp in Unix milliseconds, whichever unit the client sent."""
    return timestamp if timestamp >= MILLISECONDS_FROM else timestamp * 1000


async def spend(request: web.Request, signature: str) -> None:
    """Spend a write's signature: it is remembered for as long as its timestamp could pass the tolerance check, and
    a write whose signature was seen before is refused (`signature_replayed`), except one that carries an
    Idempotency-Key: it goes on, marked as a repeat, and is given the answer recorded for that key; a key with no
    recorded answer refuses it like any other repeat (web/edge/idempotency.py for the calls answered here,
    web/api/commands.py for the order actors' commands)."""
    c = ctx(request)
    if not await c.bus.pipeliner.call("SET", c.keys.signature_seen(signature), 1, "NX", "EX", replay_ttl(c.settings)):
        if request.method not in KEYED_METHODS or idempotency_key(request) is None:
            raise replayed()
        request[REPEATED_SIGNATURE] = True


@web.middleware
async def signature_middleware(request: web.Request, handler):
    if not request.path.startswith("/b2b/") or request.path in PUBLIC_PATHS:
        return await handler(request)
    client_id = _header(request, "X-Client-ID")
    timestamp = _header(request, "X-Timestamp")
    signature = _header(request, "X-Signature")
    if not _PUBLIC_KEY.match(client_id):
        raise ApiError(401, "invalid_client_id", "X-Client-ID must be a public key pk_live_... or pk_test_....", "X-Client-ID")
    api_key = await _api_key(request, client_id)
    if api_key is None:
        raise ApiError(401, "unknown_client_id", "No API key has this public key.", "X-Client-ID")
    if not timestamp.isdigit():
        raise ApiError(401, "invalid_timestamp", "X-Timestamp must be an integer Unix time in seconds (or milliseconds).", "X-Timestamp")
    c = ctx(request)
    signed_at_ms = _milliseconds(int(timestamp))
    skew = abs(c.clock().timestamp() - signed_at_ms / 1000)
    if skew > c.settings.signature_tolerance_s:
        raise ApiError(
            401, "timestamp_out_of_tolerance",
            f"X-Timestamp is {int(skew)} s from server time; at most {c.settings.signature_tolerance_s} s is accepted.",
            "X-Timestamp",
        )
    if signature.lower().startswith("sha256="):
        raise ApiError(401, "signature_prefix_not_allowed", "X-Signature is raw lowercase hex, without a sha256= prefix.", "X-Signature")
    body = await request.read()
    if not _HEX.match(signature) or not matches(api_key.secret, request.method, request.raw_path, timestamp, body, signature):
        raise ApiError(401, "invalid_signature", "X-Signature does not match the request signed with the secret key.", "X-Signature")
    request[CALLER] = api_key
    logs.note(merchant_id=api_key.merchant_id)
    one_command = request.method not in SAFE_METHODS and request.match_info.handler in request.app[ONE_COMMAND]
    if one_command:
        request[UNSPENT_SIGNATURE] = signature  # submit() spends it with the command (web/api/route.py)
        request[SIGNED_AT_MS] = signed_at_ms
        if c.bus.takes_with_commands:
            return await rate_limits.with_command(request, handler)
    await rate_limits.check_api_key(request)
    if not one_command and request.method not in SAFE_METHODS:
        await spend(request, signature)
    return await handler(request)
