"""The Idempotency-Key: the header, read and checked once per request, and the calls that do not go through the
order actors answered once per key: one table, one transaction.

The key is claimed, the work done and its answer recorded in one transaction, so a retry (even a
concurrent one, which waits on the claim) answers the first response and the work happens once.
"""

from __future__ import annotations

import hashlib
from typing import Awaitable, Callable

import asyncpg
from aiohttp import web

from web.edge.app_state import REPEATED_SIGNATURE, caller, ctx
from web.edge.errors import ApiError
from web.edge.signing import replayed

Work = Callable[[asyncpg.Connection], Awaitable[web.Response]]
IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
_KEY: web.RequestKey[tuple] = web.RequestKey("idempotency_key", tuple)  # (the key or None,) once read


def idempotency_key(request: web.Request) -> str | None:
    """The request's Idempotency-Key, None without one: the header is read and checked on first asking only."""
    if _KEY not in request:
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key is not None and not 0 < len(key) <= 255:
            raise ApiError(400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 characters.",
                           IDEMPOTENCY_HEADER)
        request[_KEY] = (key,)
    return request[_KEY][0]


def request_hash(method: str, path: str, body: bytes) -> str:
    """What a recorded answer must have been given to: the same method, path and body."""
    return hashlib.sha256(f"{method} {path}\n".encode() + body).hexdigest()


async def once(request: web.Request, work: Work) -> web.Response:
    """Run work(conn) in a transaction; with a key, at most once per (merchant, mode, key).

    Call it after the body validated: a request refused before it started records nothing (it
    may be corrected and sent again with the same key). A refusal from the work itself is
    recorded and answered again, like a success; a 5xx is not, so a retry can succeed."""
    key = idempotency_key(request)
    api_key = caller(request)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        if key is not None:
            digest = request_hash(request.method, request.path, await request.read())
            claimed = await conn.fetchval(
                "INSERT INTO idempotency_keys (merchant_id, livemode, key, request_hash, status, body)"
                " VALUES ($1, $2, $3, $4, 0, '') ON CONFLICT DO NOTHING RETURNING true",
                api_key.merchant_id, api_key.livemode, key, digest,
            )
            if not claimed:
                return await _recorded(conn, api_key.merchant_id, api_key.livemode, key, digest)
            if request.get(REPEATED_SIGNATURE):
                raise replayed()  # nothing recorded to answer a repeat with: refused, and the claim rolls back
        try:
            async with conn.transaction():  # a refusal leaves nothing of the work written
                response = await work(conn)
        except ApiError as exc:
            if exc.status >= 500:
                raise
            response = exc.response()
        if key is not None:
            await conn.execute(
                "UPDATE idempotency_keys SET status = $4, body = $5 WHERE merchant_id = $1 AND livemode = $2 AND key = $3",
                api_key.merchant_id, api_key.livemode, key, response.status, response.body,
            )
        return response


async def _recorded(conn: asyncpg.Connection, merchant_id: str, livemode: bool, key: str, digest: str) -> web.Response:
    row = await conn.fetchrow(
        "SELECT request_hash, status, body FROM idempotency_keys WHERE merchant_id = $1 AND livemode = $2 AND key = $3",
        merchant_id, livemode, key,
    )
    if row["request_hash"] != digest:
        raise ApiError(409, "idempotency_key_reused",
                       "This Idempotency-Key was already used with a different request.", IDEMPOTENCY_HEADER)
    return web.Response(body=bytes(row["body"]), status=row["status"], content_type="application/json",
                        headers={REPLAYED_HEADER: "true"})
