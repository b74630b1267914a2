"""Token buckets in Redis (GCRA: each bucket is one key holding the time at which it is full again).

The Lua function is written once and used by two scripts: the rate limit on its own (web/edge/rate_limits.py), and,
on a single Redis server, the limit taken in the same call that spends a signature and appends its command
(streams/producer.py), so that a write costs the web one Redis call instead of two.
"""

from __future__ import annotations

from typing import NamedTuple

from streams.pipeliner import Script

# take(key, microseconds per token, burst, cost) -> {allowed, remaining, retry after ms, full again in ms}; a cost
# of 0 asks whether one token is there, taking none. Redis's own clock, so web processes whose clocks differ share
# one bucket fairly.
TAKE_FUNCTION = """
local function take(key, per, burst, cost)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local tat = math.max(tonumber(redis.call('GET', key) or now), now)
  local new_tat = tat + math.max(cost, 1) * per
  local allow_at = new_tat - burst * per
  if now < allow_at then
    return {0, 0, math.ceil((allow_at - now) / 1000), math.ceil((tat - now) / 1000)}
  end
  if cost > 0 then
    tat = new_tat
    redis.call('SET', key, string.format('%.0f', tat), 'PX', math.max(1, math.ceil((tat - now) / 1000)))
  end
  return {1, math.floor((now - (tat - burst * per)) / per), 0, math.ceil((tat - now) / 1000)}
end
"""

# KEYS[1]: the bucket. ARGV: microseconds per token, burst, cost.
TAKE = Script(TAKE_FUNCTION + "return take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))")


class Bucket(NamedTuple):
    key: str
    per_us: int  # microseconds per token
    burst: int


class Verdict(NamedTuple):
    allowed: bool
    remaining: int
    retry_after_ms: int
    reset_ms: int  # until the bucket is full again


class Take:
    """One token to take from a bucket in the call that sends a command; the call leaves the bucket's verdict here,
    or leaves it None when the token was not taken (the call never reached Redis, or was never made)."""

    def __init__(self, bucket: Bucket):
        self.bucket = bucket
        self.verdict: Verdict | None = None


def verdict(reply: list) -> Verdict:
    allowed, remaining, retry_ms, reset_ms = reply[:4]
    return Verdict(bool(allowed), remaining, retry_ms, reset_ms)
