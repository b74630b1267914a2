"""Partition ownership: each command partition is served by exactly one live worker.

A lease is a Redis key holding the worker id with an expiry, renewed while the worker lives.
Workers announce themselves in a sorted set, and each takes a fair share of the partitions,
so adding a worker rebalances and a dead worker's partitions are taken over after the TTL.

Each lease carries an epoch, counted per partition in a key that never expires and raised by the script that takes
the lease: every new holder's epoch is above every earlier one's. PostgreSQL refuses a commit under an epoch older
than the newest it was told of (actors/fencing.py). A worker knows how long its leases last at the least: from the
moment it sent the refresh that renewed them, one TTL (`valid_until`); Redis keeps them at least that long.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

from streams.connection import Client
from streams.names import Keys

# Renew only a lease we still hold; release only our own.
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
# Take a free lease and count its epoch, together: no holder without an epoch of its own.
_ACQUIRE = """
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('incr', KEYS[2]) end
return 0
"""
# Give a lease up, and have the next holder's epoch come after `floor` (PostgreSQL knew of an epoch Redis lost).
_GIVE_UP = """
if tonumber(redis.call('get', KEYS[2]) or '0') < tonumber(ARGV[2]) then redis.call('set', KEYS[2], ARGV[2]) end
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class Leases:
    def __init__(self, redis: Client, keys: Keys, worker_id: str, ttl_ms: int):
        self.redis = redis
        self.keys = keys
        self.worker_id = worker_id
        self.ttl_ms = ttl_ms
        self.owned: set[int] = set()
        self.epochs: dict[int, int] = {}  # of the owned partitions
        self.valid_until = 0.0  # time.monotonic() when the owned leases may have lapsed

    async def refresh(self, now_ms: int | None = None) -> tuple[set[int], set[int]]:
        """Renew, rebalance and acquire; returns (gained, lost) partitions. `now_ms` is on Redis's clock when the
        worker measures its own against it: every worker's announcement is then dated by the same clock."""
        sent = time.monotonic()
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
        for p in lost:
            self.epochs.pop(p, None)

        gained = set()
        for p in range(self.keys.partitions):
            if len(self.owned) >= share:
                break
            if p in self.owned:
                continue
            epoch = await self.redis.eval(_ACQUIRE, 2, self.keys.lease(p), self.keys.lease_epoch(p), self.worker_id,
                                          self.ttl_ms)
            if epoch:
                self.owned.add(p)
                self.epochs[p] = int(epoch)
                gained.add(p)
        self.valid_until = sent + self.ttl_ms / 1000
        return gained, lost

    def lapse(self) -> None:
        """Past `valid_until` without a renewal: hold nothing. Redis lets the leases expire; the next refresh
        acquires anew, under new epochs."""
        self.owned.clear()
        self.epochs.clear()

    async def give_up(self, floors: Mapping[int, int]) -> None:
        """Release these partitions' leases, if still ours, so that their next holder takes an epoch above each
        floor."""
        for p, floor in floors.items():
            await self.redis.eval(_GIVE_UP, 2, self.keys.lease(p), self.keys.lease_epoch(p), self.worker_id, floor)
            self.owned.discard(p)
            self.epochs.pop(p, None)

    async def release_all(self) -> None:
        for p in self.owned:
            await self.redis.eval(_RELEASE, 1, self.keys.lease(p), self.worker_id)
        self.owned.clear()
        self.epochs.clear()
        await self.redis.zrem(self.keys.workers, self.worker_id)


async def unheld(redis: Client, keys: Keys) -> list[int]:
    """The partitions no worker holds a lease on."""
    return [p for p in range(keys.partitions) if not await redis.exists(keys.lease(p))]
