"""The lanes' batches share commits: what lanes decide while a commit is in flight goes into the next one, in one
statement, fenced for every partition its batches were read from; a batch the database refuses, or read under a
lease epoch that is no longer the newest, fails alone: the batches committed beside it are not held by it."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from actors import fencing, store
from actors.applier import BatchHooks
from actors.group_commit import GroupCommit
from actors.outcomes import Outcome

STALE = 3  # a partition whose lease went to another worker: PostgreSQL holds a newer epoch of it


class Database:
    """A connection that takes a while to commit, refuses any statement holding a command named `bad`, and knows a
    newer lease epoch of partition STALE than any batch holds: its statement fails as migration 034's guard fails."""

    def __init__(self) -> None:
        self.commits: list[list[str]] = []  # the commands of each statement that committed

    async def execute(self, _sql: str, *columns: list) -> None:
        [commands] = [c for c in columns if c and isinstance(c[0], str) and c[0].startswith("cmd_")] or [[]]
        [partitions, _epochs] = [c for c in columns if c and isinstance(c[0], int)]  # the batches' only numbers
        await asyncio.sleep(0.01)
        if STALE in partitions:
            raise asyncpg.PostgresError.new({"C": fencing.SQLSTATE, "M": "fenced", "D": str(STALE)})
        if any("bad" in command_id for command_id in commands):
            raise asyncpg.UniqueViolationError("duplicate key value")
        self.commits.append(sorted(commands))


def batch(*command_ids: str) -> store.Rows:
    return store.batch_rows([Outcome(f"cmd_{c}", f"ord_{c}", "", b"{}") for c in command_ids], {}, {}, [], {})


async def lane(group: GroupCommit, db: Database, *command_ids: str, partition: int = 0) -> str:
    try:
        await group.commit(db, batch(*command_ids), {(partition, 1)})
        return "committed"
    except asyncpg.UniqueViolationError:
        return "refused"
    except fencing.Fenced as fenced:
        assert fenced.partitions == {STALE}
        return "fenced"


async def test_batches_queued_during_a_commit_go_together_into_the_next_one():
    group, db = GroupCommit(BatchHooks(), "t:"), Database()
    first = asyncio.create_task(lane(group, db, "a1", "a2"))
    await asyncio.sleep(0)  # the first lane leads; the others queue behind its commit
    rest = [asyncio.create_task(lane(group, db, f"{n}1")) for n in "bcd"]
    assert await asyncio.gather(first, *rest) == ["committed"] * 4
    assert db.commits == [["cmd_a1", "cmd_a2"], ["cmd_b1", "cmd_c1", "cmd_d1"]]
    assert await lane(group, db, "e1") == "committed"  # nothing in flight: committed at once
    assert db.commits[-1] == ["cmd_e1"]


@pytest.mark.parametrize("refused_at", [0, 1, 2])
async def test_a_batch_the_database_refuses_fails_alone(refused_at):
    group, db = GroupCommit(BatchHooks(), "t:"), Database()
    lead = asyncio.create_task(lane(group, db, "lead"))
    await asyncio.sleep(0)
    names = ["x", "y", "z"]
    names[refused_at] = "bad"
    queued = [asyncio.create_task(lane(group, db, name)) for name in names]
    results = await asyncio.gather(lead, *queued)
    assert results == ["committed"] + ["refused" if n == "bad" else "committed" for n in names]
    assert [c for c in db.commits if len(c) > 1] == []  # the merged statement was refused; each went alone
    assert sorted(sum(db.commits, [])) == sorted(f"cmd_{n}" for n in ["lead", *names] if n != "bad")


async def test_a_lane_stopped_while_queued_leaves_the_others_committing():
    group, db = GroupCommit(BatchHooks(), "t:"), Database()
    lead = asyncio.create_task(lane(group, db, "lead"))
    await asyncio.sleep(0)
    stopped = asyncio.create_task(lane(group, db, "stopped"))
    other = asyncio.create_task(lane(group, db, "other"))
    await asyncio.sleep(0)
    stopped.cancel()
    assert await asyncio.gather(lead, other) == ["committed", "committed"]
    assert db.commits == [["cmd_lead"], ["cmd_other"]]  # the stopped lane's batch was never written
    assert await lane(group, db, "after") == "committed"


async def test_a_batch_read_under_a_superseded_lease_is_fenced_and_the_others_commit():
    group, db = GroupCommit(BatchHooks(), "t:"), Database()
    lead = asyncio.create_task(lane(group, db, "lead"))
    await asyncio.sleep(0)
    queued = [asyncio.create_task(lane(group, db, name, partition=p)) for name, p in (("x", 1), ("y", STALE), ("z", 2))]
    assert await asyncio.gather(lead, *queued) == ["committed", "committed", "fenced", "committed"]
    assert sorted(sum(db.commits, [])) == ["cmd_lead", "cmd_x", "cmd_z"]
