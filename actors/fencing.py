"""Fencing for the single writer: PostgreSQL refuses a batch from a worker whose lease on one of its partitions
has gone to another worker, whatever that worker's clock and network did.

Each lease carries an epoch that grows with every new holder (streams/leases.py). A worker claims its epoch in
`partition_fences` before it reads anything from the partition; the row only ever moves to a newer epoch. Every
batch's statement (actors/store.py `commit`, one round trip, atomic on its own) first updates the rows of its
partitions where they still hold its epochs, `FenceRow`s, and fails as a whole unless each was confirmed (the guard
of migration 034, raising SQLSTATE FENCE): a worker that was cut off past its TTL, while another took the partition
and claimed a newer epoch, is refused and writes nothing, its commands left pending for the holder. Under READ
COMMITTED the update waits for a claim in flight and checks the epoch again once that claim commits, and it locks
the rows it updates until the statement commits, so a claim waits for a commit in flight: each commit is wholly
before or wholly after the handover.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, NamedTuple

import asyncpg

from actors.row_arrays import Arrays

SQLSTATE = "FENCE"  # raised by fences_hold() (migration 034), the stale partitions in DETAIL


class Fenced(Exception):
    """A batch PostgreSQL refused: another worker holds a newer epoch on these partitions."""

    def __init__(self, partitions: set[int]):
        super().__init__(f"partitions {sorted(partitions)} are fenced by a newer lease epoch")
        self.partitions = partitions


# The worker's epochs as they stand; a partition's row is written only by an epoch as new as its own.
_CLAIM = """
WITH claimed AS (
    INSERT INTO partition_fences AS f (scope, partition, epoch, holder)
    SELECT $1, * FROM unnest($2::int[], $3::bigint[], $4::text[])
    ON CONFLICT (scope, partition) DO UPDATE SET epoch = excluded.epoch, holder = excluded.holder, claimed_at = now()
    WHERE f.epoch <= excluded.epoch
    RETURNING partition
)
SELECT partition, epoch FROM partition_fences
WHERE scope = $1 AND partition = ANY($2) AND partition NOT IN (SELECT partition FROM claimed)
"""


async def claim(conn: asyncpg.Connection, scope: str, epochs: Mapping[int, int], holder: str) -> dict[int, int]:
    """Claim these partitions of `scope` (the Redis key prefix of their command streams) at these epochs for
    `holder`, in one statement of its own: from its commit on, a commit under an older epoch is refused. Returns the
    partitions PostgreSQL knows a newer epoch of, with it (the lease was taken again meanwhile, or Redis lost its
    epochs): they are not this worker's to serve."""
    partitions = sorted(epochs)
    rows = await conn.fetch(_CLAIM, scope, partitions, [epochs[p] for p in partitions], [holder] * len(partitions))
    return {r["partition"]: r["epoch"] for r in rows}


class FenceRow(NamedTuple):
    """A partition of a scope (see claim) that a commit writes for, and the lease epoch its batches were read under."""

    scope: Annotated[str, "text"]
    partition: Annotated[int, "int"]
    epoch: Annotated[int, "bigint"]


class Fence(NamedTuple):
    """The SQL a commit's statement fences itself with."""

    cte: str  # `fenced`, to head its WITH: the given partitions' rows that still hold the given epochs, updated
    guard: str  # the condition its final INSERT is gated on: fails the statement unless every row was confirmed


def fence(arrays: Arrays) -> Fence:
    """The fence of a statement whose parameters `arrays` numbers, fed FenceRows."""
    cte = f"""fenced AS (
    UPDATE partition_fences f SET committed_at = now() FROM {arrays.unnest(FenceRow, "held")}
    WHERE f.scope = held.scope AND f.partition = held.partition AND f.epoch = held.epoch
    RETURNING f.partition
)"""
    return Fence(cte, f"fences_hold(ARRAY(SELECT partition FROM fenced), {arrays.add(FenceRow)['partition']})")


def refusal(exc: asyncpg.PostgresError) -> Fenced | None:
    """The fence's refusal of a commit, as Fenced, or None for any other error of its statement."""
    if exc.sqlstate != SQLSTATE:
        return None
    return Fenced({int(p) for p in exc.detail.split(",")})
