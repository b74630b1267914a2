"""Token buckets in Redis: per API key on the B2B API, per client IP on the hosted pages.

Each bucket is one Redis key updated by one Lua script (streams/buckets.py), so the check is atomic across web
processes and stays within one Redis Cluster slot.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from aiohttp import web

from streams.buckets import TAKE, Bucket, Take
from streams.buckets import Verdict as BucketVerdict
from streams.buckets import verdict as read_verdict
from web.edge.app_state import CALLER, COMMAND_ID, ctx
from web.edge.errors import ApiError

# Unknown tokens on the hosted pages, per client IP: 20 at once, then one every 6 s. A buyer mistypes a link
# now and then; a script guessing tokens is slowed to 600 guesses an hour.
MISS_BURST = 20
MISS_EVERY_S = 6
PAGE_PREFIXES = ("/c/", "/refund-request/", "/r/", "/receipts/", "/l/")


class Verdict(NamedTuple):
    allowed: bool
    limit: int
    remaining: int
    retry_after_ms: int
    reset_ms: int

    def headers(self) -> dict[str, str]:
        headers = {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(self.remaining),
                   "X-RateLimit-Reset": str(math.ceil(self.reset_ms / 1000))}
        if not self.allowed:
            headers["Retry-After"] = str(max(1, math.ceil(self.retry_after_ms / 1000)))
        return headers

    def refusal(self, code: str, message: str) -> ApiError:
        return ApiError(429, code, message, headers=self.headers())

    @classmethod
    def of(cls, taken: BucketVerdict, burst: int) -> Verdict:
        return cls(taken.allowed, burst, taken.remaining, taken.retry_after_ms, taken.reset_ms)


VERDICT: web.RequestKey[Verdict] = web.RequestKey("rate_limit", Verdict)
# A write that sends one command takes its token in the call that sends it (web/api/commands.py).
TAKE_WITH_COMMAND: web.RequestKey[Take] = web.RequestKey("take_with_command", Take)


def taken_verdict(taken: Take) -> Verdict:
    """The verdict a call that sent a command left on its token (streams/producer.py)."""
    return Verdict.of(taken.verdict, taken.bucket.burst)


def _bucket(request: web.Request, name: str, per_second: float, burst: int) -> Bucket:
    return Bucket(ctx(request).keys.rate_limit(name), max(1, round(1_000_000 / per_second)), burst)


async def take(request: web.Request, bucket: str, per_second: float, burst: int, cost: int = 1) -> Verdict:
    reply = await ctx(request).bus.pipeliner.run(TAKE, 1, *_bucket(request, bucket, per_second, burst), cost)
    return Verdict.of(read_verdict(reply), burst)


def _api_key_bucket(request: web.Request) -> tuple[str, float, int]:
    """The caller's bucket: its merchant's own limits, or the defaults."""
    api_key, settings = request[CALLER], ctx(request).settings
    return (f"key:{api_key.public_key}", api_key.rate_limit_rps or settings.rate_limit_rps,
            api_key.rate_limit_burst or settings.rate_limit_burst)


async def check_api_key(request: web.Request) -> None:
    verdict = await take(request, *_api_key_bucket(request))
    request[VERDICT] = verdict
    if not verdict.allowed:
        raise api_key_refusal(verdict)


def api_key_refusal(verdict: Verdict) -> ApiError:
    return verdict.refusal("rate_limited", "Too many requests for this API key; retry after `Retry-After` seconds.")


async def with_command(request: web.Request, handler):
    """Serve a write that sends one command, its token taken in the call that sends it, on a Redis where one call
    can (streams/producer.py): one Redis call for the limit, the signature and the command. A request that ends
    without sending its command (a refused body, say) takes its token here, as every request once did before its
    handler, so a caller over its limit is refused whatever it sends."""
    taken = request[TAKE_WITH_COMMAND] = Take(_bucket(request, *_api_key_bucket(request)))

    async def unless_taken() -> None:
        if taken.verdict is None and COMMAND_ID not in request:
            await check_api_key(request)

    try:
        response = await handler(request)
    except (ApiError, web.HTTPException):
        await unless_taken()
        raise
    await unless_taken()
    return response


@web.middleware
async def page_rate_limit_middleware(request: web.Request, handler):
    """The hosted pages, per client IP; a client that keeps asking for tokens that do not exist is slowed down."""
    if not request.path.startswith(PAGE_PREFIXES):
        return await handler(request)
    settings, ip = ctx(request).settings, request.remote or "unknown"
    verdict = await take(request, f"page:{ip}", settings.page_rate_limit_rps, settings.page_rate_limit_burst)
    request[VERDICT] = verdict
    if not verdict.allowed:
        raise verdict.refusal("rate_limited", "Too many requests from this address; retry after `Retry-After` seconds.")
    misses = await take(request, f"miss:{ip}", 1 / MISS_EVERY_S, MISS_BURST, cost=0)
    if not misses.allowed:
        raise misses.refusal("too_many_unknown_tokens",
                             "Too many links that do not exist were asked for from this address; retry later.")
    try:
        response = await handler(request)
    except (ApiError, web.HTTPException) as exc:
        if getattr(exc, "status", None) == 404:
            await take(request, f"miss:{ip}", 1 / MISS_EVERY_S, MISS_BURST)
        raise
    if response.status == 404:
        await take(request, f"miss:{ip}", 1 / MISS_EVERY_S, MISS_BURST)
    return response


async def add_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer to a limited request tells the client where its bucket stands (app.on_response_prepare)."""
    verdict = request.get(VERDICT)
    if verdict is None and (taken := request.get(TAKE_WITH_COMMAND)) is not None and taken.verdict is not None:
        verdict = taken_verdict(taken)
    if verdict is not None:
        response.headers.update(verdict.headers())
