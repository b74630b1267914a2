"""What a worker's lanes may act on, and under which lease epoch: the partitions they serve and the reads they have
in flight. A worker that cannot renew its leases within their TTL lapses (actors/worker.py): it serves nothing, its
reads in flight are cancelled, and a read that returns all the same is not applied (`still_held`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from typing import TypeVar

from actors.fencing import Fenced
from common import metrics

log = logging.getLogger(__name__)
T = TypeVar("T")


class Lapsed(Exception):
    """A read cancelled because the worker's leases lapsed while it was in flight."""


class Tenure:
    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self.serving: set[int] = set()  # owned partitions the lanes may read
        self.epochs: dict[int, int] = {}  # of the served partitions: the lease epoch each was claimed under
        self.fenced: dict[int, int] = {}  # partitions PostgreSQL refused a commit of, with their epoch: to give up
        self._reads: set[asyncio.Task] = set()

    def serve(self, epochs: Mapping[int, int]) -> None:
        self.epochs.update(epochs)
        self.serving |= epochs.keys()

    def held(self, partitions: set[int]) -> dict[int, int]:
        """The epochs these served partitions are held under now: a read from them is applied only under these."""
        return {p: self.epochs[p] for p in partitions}

    def still_held(self, held: Mapping[int, int]) -> set[int]:
        """Which of these partitions are still served under the same epoch."""
        return {p for p, epoch in held.items() if p in self.serving and self.epochs.get(p) == epoch}

    async def read(self, reading: Awaitable[T]) -> T:
        """Await a read that `lapse` may cancel: it raises Lapsed then."""
        task = asyncio.ensure_future(reading)
        self._reads.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled() and not asyncio.current_task().cancelling():
                raise Lapsed from None
            raise
        finally:
            self._reads.discard(task)

    def lapse(self) -> None:
        """Serve nothing, at once: reads in flight are cancelled, and what they took stays pending for the holder."""
        self.serving.clear()
        self.epochs.clear()
        for task in self._reads:
            task.cancel()

    def refused(self, fenced: Fenced, held: Mapping[int, int]) -> None:
        """PostgreSQL refused a commit made under the epochs `held`: another worker holds a newer epoch on these
        partitions. Those still served under the refused epoch are dropped now, and their leases given up by the
        next refresh; one this worker holds anew already, under a newer epoch of its own, stays."""
        stale = {p for p in fenced.partitions if self.epochs.get(p) == held[p]}
        log.warning("worker %s: commit refused, partitions %s are held under a newer lease epoch; dropping %s "
                    "(the batch was rolled back and stays pending for their holder)", self.worker_id,
                    sorted(fenced.partitions), sorted(stale))
        metrics.FENCED.inc()
        self.fenced |= {p: held[p] for p in stale}
        self.serving -= stale
