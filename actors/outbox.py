"""The outbox sweep: events a crash left in the outbox (committed, not known to be published) go to the events
stream after 5 s, at least once (event ids let readers dedupe)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

import asyncpg

from actors import store
from common import faults
from common.clock import utcnow
from streams.events import publication
from streams.names import Keys
from streams.pipeliner import Pipeliner

log = logging.getLogger(__name__)


class OutboxSweep:
    def __init__(self, pool: asyncpg.Pool, pipeliner: Pipeliner, keys: Keys, name: str) -> None:
        self.pool, self.pipeliner, self.keys, self.name = pool, pipeliner, keys, name

    async def sweep(self, min_age_s: float = 5.0) -> int:
        """Publish what the outbox has held for at least `min_age_s`; returns how many batches."""
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await store.pending_outbox(conn, utcnow() - timedelta(seconds=min_age_s), 1000)
            if not rows:
                return 0
            # The outbox keeps no request ids: events a crash left there reach the webhooks without theirs.
            await self.pipeliner.call_many(publication(self.keys, [(payload, "") for _batch_id, payloads in rows
                                                                   for payload in payloads]))
            await store.drop_outbox(conn, [batch_id for batch_id, _ in rows])
        return len(rows)

    async def keep_swept(self, stop: asyncio.Event, every_s: float = 2.0) -> None:
        """Sweep until told to stop. A failed sweep is retried at the next one; one that fails for a fault of
        this code says so with its traceback, or the events it leaves in the outbox would wait unnoticed."""
        while not stop.is_set():
            try:
                await self.sweep()
            except Exception as exc:  # noqa: BLE001 - faults.report tells a bug from a dependency away
                faults.report(log, f"worker {self.name}: outbox sweep", exc, "the next sweep retries")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)
