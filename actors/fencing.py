"""Fencing for the single writer: PostgreSQL refuses a batch from a worker whose lease on one of its partitions
has gone to another worker, whatever that worker's clock and network did.

Each lease carries an epoch that grows with every new holder (streams/leases.py). A worker claims its epoch in
`partition_fences` before it reads anything from the partition; the row only ever moves to a newer epoch. Every
batch's transaction checks, before it commits, that the rows of its partitions still hold its epochs
(`check_fences`): a worker that was cut off past its TTL, while another took the partition and claimed a newer
epoch, is refused and its transaction rolled back, its commands left pending for the holder. The check locks the
rows it reads, so a claim waits for a commit in flight and a commit waits for a claim: each commit is wholly
before or wholly after the handover.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import asyncpg


class Fenced(Exception):
    """A batch PostgreSQL refused: another worker holds a newer epoch on these partitions."""

    def __init__(self, partitions: set[int]):
        super().__init__(f"partitions {sorted(partitions)} are fenced by a newer lease epoch")
        self.partitions = partitions


# The worker's epochs as they stand; a partition's row is written only by an epoch as new as its own.
_CLAIM = """
WITH claimed AS (
    INSERT INTO partition_fences AS f (partition, epoch, holder)
    SELECT * FROM unnest($1::int[], $2::bigint[], $3::text[])
    ON CONFLICT (partition) DO UPDATE SET epoch = excluded.epoch, holder = excluded.holder, claimed_at = now()
    WHERE f.epoch <= excluded.epoch
    RETURNING partition
)
SELECT partition, epoch FROM partition_fences
WHERE partition = ANY($1) AND partition NOT IN (SELECT partition FROM claimed)
"""


async def claim(conn: asyncpg.Connection, epochs: Mapping[int, int], holder: str) -> dict[int, int]:
    """Claim these partitions at these epochs for `holder`, in one statement of its own: from its commit on, a
    commit under an older epoch is refused. Returns the partitions PostgreSQL knows a newer epoch of, with it (the
    lease was taken again meanwhile, or Redis lost its epochs): they are not this worker's to serve."""
    partitions = sorted(epochs)
    rows = await conn.fetch(_CLAIM, partitions, [epochs[p] for p in partitions], [holder] * len(partitions))
    return {r["partition"]: r["epoch"] for r in rows}


_CHECK = """
UPDATE partition_fences f SET committed_at = now()
FROM unnest($1::int[], $2::bigint[]) AS held(partition, epoch)
WHERE f.partition = held.partition AND f.epoch = held.epoch
RETURNING f.partition
"""


async def check_fences(conn: asyncpg.Connection, held: Collection[tuple[int, int]]) -> None:
    """Inside a commit's transaction, before it commits: raise Fenced unless every (partition, epoch) the
    transaction commits for is still the partition's newest epoch. The rows stay locked to the commit, so no claim
    of a newer epoch passes between this check and the commit."""
    if not held:
        return
    partitions, epochs = zip(*sorted(held))
    confirmed = {r["partition"] for r in await conn.fetch(_CHECK, list(partitions), list(epochs))}
    if stale := set(partitions) - confirmed:
        raise Fenced(stale)
