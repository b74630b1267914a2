"""API keys by public key, cached in each web process: bounded, and a miss forgotten within seconds."""

from __future__ import annotations

import time
from collections import OrderedDict

from accounts.merchants import ApiKey

HIT_S = 5.0  # a rolled secret or a changed rate limit reaches every web process within this long
MISS_S = 2.0  # a key created a moment ago works within this long; made-up keys cannot fill the cache for longer
MAX_ENTRIES = 10_000
# While PostgreSQL cannot be asked (a failover takes its TTL and a little more), a key found there is trusted this
# much longer, so that merchants' retries still reach the command they name; a key rolled in that window could
# not have been rolled anyway, the database being away.
STALE_S = 60.0


class KeyCache:
    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[float, ApiKey | None]] = OrderedDict()

    def get(self, public_key: str) -> tuple[bool, ApiKey | None]:
        """(found, key): found is False when the cache does not know, or no longer trusts what it knew."""
        entry = self._entries.get(public_key)
        if entry is None or time.monotonic() > entry[0]:
            return False, None
        self._entries.move_to_end(public_key)
        return True, entry[1]

    def stale(self, public_key: str) -> ApiKey | None:
        """The key last found under this public key, if it expired less than STALE_S ago (never a miss)."""
        entry = self._entries.get(public_key)
        if entry is None or time.monotonic() > entry[0] + STALE_S:
            return None
        return entry[1]

    def put(self, public_key: str, api_key: ApiKey | None) -> None:
        self._entries[public_key] = (time.monotonic() + (HIT_S if api_key else MISS_S), api_key)
        self._entries.move_to_end(public_key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
