-- Fencing for the single writer: a row per command partition holding the epoch of its newest lease. A worker
-- that takes a partition's lease claims its epoch here before it reads anything (the row only ever moves to a
-- newer epoch), and every batch it commits checks, in the commit's own transaction, that the row still holds its
-- epoch: a worker whose lease lapsed and went to another is refused, whatever its clock and network did
-- (actors/fencing.py). `scope` is the Redis key prefix of the command streams: deployments (or test runs) that
-- share a database under different prefixes have partitions, leases and epochs of their own. `holder` is the worker
-- that claimed the epoch; `committed_at` the last commit under it.
CREATE TABLE partition_fences (
    scope text NOT NULL,
    partition int NOT NULL,
    epoch bigint NOT NULL,
    holder text NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    committed_at timestamptz,
    PRIMARY KEY (scope, partition)
);
