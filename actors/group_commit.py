"""Group commit across a worker's lanes: one commit in flight at a time, and what the other lanes decide meanwhile
goes into the next one, in one statement. Transactions grow with the load, not with the number of lanes or
partitions.

No task of its own: the lane that finds no commit in flight leads, writing every batch queued so far on its own
connection; a batch queued behind it waits, and the first such lane leads the next commit when this one ends. Each
order is one lane's, so the batches of one commit never touch the same order, and a lane waits for its batch's
commit before it decides the next: each order's commands are still serialized by its lane.

Each commit is fenced for every partition its batches were read from (actors/fencing.py): its one statement checks
their lease epochs before it writes its first row and fails as a whole if one is no longer the newest, so a worker
whose lease went to another commits nothing, in one round trip with no transaction around it. If PostgreSQL refuses
a commit of several batches, or fences one of their partitions, each batch is written again on its own, so a batch
the database refuses fails only its own lane (which then retries its commands one by one, actors/lane.py), and a
fenced one only the lanes of the fenced partitions.
"""

from __future__ import annotations

import asyncio
import time

import asyncpg

from actors import store
from actors.fencing import Fenced, FenceRow
from common import faults, metrics

_LEAD = object()  # what a queued batch's future holds when its lane is to lead the next commit


class _Queued:
    __slots__ = ("rows", "fences", "done")

    def __init__(self, rows: store.Rows, fences: set[tuple[int, int]]) -> None:
        self.rows = rows
        self.fences = fences  # (partition, lease epoch) the batch was read under
        self.done: asyncio.Future = asyncio.get_running_loop().create_future()


class GroupCommit:
    def __init__(self, hooks, scope: str) -> None:
        self.hooks = hooks  # actors.applier.BatchHooks: the crash tests' moments
        self.scope = scope  # of the partitions' fences: the Redis key prefix of their command streams
        self._queue: list[_Queued] = []
        self._leading = False

    async def commit(self, conn: asyncpg.Connection, rows: store.Rows, fences: set[tuple[int, int]]) -> None:
        """Once this batch is committed, with whatever other lanes queued beside it; raises what its commit raised
        (Fenced when one of its partitions' epochs is no longer the newest)."""
        mine = _Queued(rows, fences)
        self._queue.append(mine)
        if self._leading:
            try:
                if await mine.done is not _LEAD:
                    return  # committed by another lane's commit
            except asyncio.CancelledError:
                if mine in self._queue:
                    self._queue.remove(mine)  # never written: its lane reads its commands again
                if mine.done.done() and not mine.done.cancelled() and mine.done.result() is _LEAD:
                    self._hand_over()  # stopped just as it was to lead: the next one does
                raise
            mine.done = asyncio.get_running_loop().create_future()  # for the commit it now leads
        self._leading = True
        taken, self._queue = self._queue, []
        try:
            await self._write(conn, taken)
        except BaseException as exc:
            # The leader's connection failed or its task was stopped: whether the statement committed is unknown,
            # so every batch of it is as a lost connection's (read again; its dedupe rows make a replay harmless).
            lost = exc if isinstance(exc, Exception) else ConnectionError("the commit was interrupted")
            for queued in taken:
                if queued is not mine and not queued.done.done():
                    queued.done.set_exception(lost)
            raise
        finally:
            self._hand_over()
        mine.done.result()  # raises this batch's own refusal

    def _hand_over(self) -> None:
        """The first batch queued meanwhile leads the next commit, or no commit is in flight."""
        while self._queue:
            first = self._queue[0]
            if not first.done.done():
                first.done.set_result(_LEAD)
                return
            self._queue.pop(0)  # its lane stopped waiting
        self._leading = False

    async def _write(self, conn: asyncpg.Connection, taken: list[_Queued]) -> None:
        try:
            await self._statement(conn, store.merged(q.rows for q in taken), set().union(*(q.fences for q in taken)))
            failures: list[BaseException | None] = [None] * len(taken)
        except (asyncpg.PostgresError, Fenced) as exc:
            if len(taken) == 1 or isinstance(exc, faults.UNAVAILABLE):
                raise
            failures = [await self._alone(conn, q) for q in taken]  # one batch's refusal is not the others'
        for queued, failure in zip(taken, failures):
            if failure is None:
                queued.done.set_result(None)
            else:
                queued.done.set_exception(failure)

    async def _alone(self, conn: asyncpg.Connection, queued: _Queued) -> BaseException | None:
        try:
            await self._statement(conn, queued.rows, queued.fences)
            return None
        except (asyncpg.PostgresError, Fenced) as exc:
            if isinstance(exc, faults.UNAVAILABLE):
                raise
            return exc

    async def _statement(self, conn: asyncpg.Connection, rows: store.Rows, fences: set[tuple[int, int]]) -> None:
        started = time.perf_counter()
        await self.hooks.commit(store.commit(conn, rows, [FenceRow(self.scope, *f) for f in fences]))
        metrics.COMMIT_DURATION.observe(time.perf_counter() - started)
        metrics.COMMIT_COMMANDS.observe(len(rows[store.CommandRow]))
