"""Token buckets in Redis: per API key on the B2B API, per client IP on the hosted pages.

Each bucket is one Redis key updated by one Lua script (GCRA: the key holds the time at which the bucket is
full again), so the check is atomic across web processes and stays within one Redis Cluster slot.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from aiohttp import web

from streams.pipeliner import Script
from web.context import CALLER, ctx
from web.errors import ApiError

# KEYS[1]: the bucket. ARGV: microseconds per token, burst, cost (0 asks whether one token is there, taking
# none). Redis's own clock, so web processes whose clocks differ share one bucket fairly.
_TAKE = Script("""
local per, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or now), now)
local new_tat = tat + math.max(cost, 1) * per
local allow_at = new_tat - burst * per
if now < allow_at then
  return {0, 0, math.ceil((allow_at - now) / 1000), math.ceil((tat - now) / 1000)}
end
if cost > 0 then
  tat = new_tat
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.max(1, math.ceil((tat - now) / 1000)))
end
return {1, math.floor((now - (tat - burst * per)) / per), 0, math.ceil((tat - now) / 1000)}
""")

# Unknown tokens on the hosted pages, per client IP: 20 at once, then one every 6 s. A buyer mistypes a link
# now and then; a script guessing tokens is slowed to 600 guesses an hour.
MISS_BURST = 20
MISS_EVERY_S = 6
PAGE_PREFIXES = ("/c/", "/refund-request/", "/r/")


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


VERDICT: web.RequestKey[Verdict] = web.RequestKey("rate_limit", Verdict)


async def take(request: web.Request, bucket: str, per_second: float, burst: int, cost: int = 1) -> Verdict:
    c = ctx(request)
    args = (1, c.keys.rate_limit(bucket), max(1, round(1_000_000 / per_second)), burst, cost)
    allowed, remaining, retry_ms, reset_ms = await c.bus.pipeliner.run(_TAKE, *args)
    return Verdict(bool(allowed), burst, remaining, retry_ms, reset_ms)


async def check_api_key(request: web.Request) -> None:
    """The caller's bucket: its merchant's own limits, or the defaults."""
    api_key, settings = request[CALLER], ctx(request).settings
    verdict = await take(request, f"key:{api_key.public_key}", api_key.rate_limit_rps or settings.rate_limit_rps,
                         api_key.rate_limit_burst or settings.rate_limit_burst)
    request[VERDICT] = verdict
    if not verdict.allowed:
        raise verdict.refusal("rate_limited", "Too many requests for this API key; retry after `Retry-After` seconds.")


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
    if verdict is not None:
        response.headers.update(verdict.headers())
