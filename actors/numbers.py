"""Order numbers a worker holds for the merchants that create orders fast.

Numbers come from the `order_numbers` row of each merchant and mode, committed there before any is used, so no
two orders ever get one. A merchant creating orders at a steady rate gets a block of about a second of them at a
time: its batches of new orders then need no PostgreSQL round trip before they are decided (actors/applier.py),
and its row is written about once a second instead of with every batch. A merchant creating fewer than
`min_rate` orders a second gets exactly what each batch needs, so its numbers have no gaps; a worker that stops
leaves its unused block as a gap in the numbers of the merchants that were that busy.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable

Key = tuple[str, bool]  # (merchant_id, livemode)

MIN_RATE = 50  # new orders a second from which a merchant's numbers are held in blocks
MAX_BLOCK = 5_000


class NumberBlocks:
    def __init__(self, min_rate: int = MIN_RATE, max_block: int = MAX_BLOCK,
                 clock: Callable[[], float] = time.monotonic):
        self.min_rate = min_rate
        self.max_block = max_block
        self.clock = clock
        self._held: dict[Key, list[int]] = {}  # a heap each: the smallest number goes first
        self._window = 0  # the whole second being counted
        self._counting: dict[Key, int] = {}  # creations seen in that second
        self._rate: dict[Key, int] = {}  # creations seen in the second before it

    def held(self, key: Key) -> int:
        return len(self._held.get(key, ()))

    def covers(self, needed: dict[Key, int]) -> bool:
        """Whether the numbers held are enough for these creations, without asking PostgreSQL."""
        return all(self.held(key) >= n for key, n in needed.items())

    def wanted(self, key: Key) -> int:
        """How many numbers to hold beyond what a batch needs: about a second of the merchant's creations."""
        rate = self._rate.get(key, 0)
        return min(rate, self.max_block) if rate >= self.min_rate else 0

    def note(self, needed: dict[Key, int]) -> None:
        """Count a batch's creations towards each merchant's rate."""
        window = int(self.clock())
        if window != self._window:
            self._rate = self._counting if window == self._window + 1 else {}
            self._counting, self._window = {}, window
        for key, n in needed.items():
            self._counting[key] = self._counting.get(key, 0) + n

    def add(self, key: Key, first: int, last: int) -> None:
        held = self._held.setdefault(key, [])
        for number in range(first, last + 1):
            heapq.heappush(held, number)

    def take(self, key: Key) -> int:
        return heapq.heappop(self._held[key])

    def give_back(self, key: Key, number: int) -> None:
        """A number whose order was not stored after all (refused, or its batch rolled back) goes to the next
        creation, so a refusal or a retry leaves no gap."""
        heapq.heappush(self._held.setdefault(key, []), number)
