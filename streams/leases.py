"""Partition ownership: each command partition is served by exactly one live worker.

A lease is a Redis key holding the worker id with an expiry, renewed while the worker lives.
Workers announce themselves in a sorted set, and each takes a fair share of the partitions,
so adding a worker rebalances and a dead worker's partitions are taken over after the TTL.
"""

from __future__ import annotations

import math
import time

from streams.connection import Client
from streams.names import Keys

# Renew only a lease we still hold; release only our own.
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class Leases:
    def __init__(self, redis: Client, keys: Keys, worker_id: str, ttl_ms: int):
        self.redis = redis
        self.keys = keys
        self.worker_id = worker_id
        self.ttl_ms = ttl_ms
        self.owned: set[int] = set()

    async def refresh(self, now_ms: int | None = None) -> tuple[set[int], set[int]]:
        """Renew, rebalance and acquire; returns (gained, lost) partitions. `now_ms` is on Redis's clock when the
        worker measures its own against it: every worker's announcement is then dated by the same clock."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        await self.redis.zadd(self.keys.workers, {self.worker_id: now_ms})
        await self.redis.zremrangebyscore(self.keys.workers, 0, now_ms - self.ttl_ms)
        live = max(await self.redis.zcard(self.keys.workers), 1)
        share = math.ceil(self.keys.partitions / live)

        lost = set()
        for p in sorted(self.owned):
            if not await self.redis.eval(_RENEW, 1, self.keys.lease(p), self.worker_id, self.ttl_ms):
                lost.add(p)
        self.owned -= lost
        while len(self.owned) > share:
            p = max(self.owned)
            await self.redis.eval(_RELEASE, 1, self.keys.lease(p), self.worker_id)
            self.owned.discard(p)
            lost.add(p)

        gained = set()
        for p in range(self.keys.partitions):
            if len(self.owned) >= share:
                break
            if p not in self.owned and await self.redis.set(
                self.keys.lease(p), self.worker_id, nx=True, px=self.ttl_ms
            ):
                self.owned.add(p)
                gained.add(p)
        return gained, lost

    async def release_all(self) -> None:
        for p in self.owned:
            await self.redis.eval(_RELEASE, 1, self.keys.lease(p), self.worker_id)
        self.owned.clear()
        await self.redis.zrem(self.keys.workers, self.worker_id)


async def unheld(redis: Client, keys: Keys) -> list[int]:
    """The partitions no worker holds a lease on."""
    return [p for p in range(keys.partitions) if not await redis.exists(keys.lease(p))]
