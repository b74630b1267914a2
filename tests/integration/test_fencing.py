"""Fencing in the commit (actors/fencing.py): PostgreSQL accepts a batch's statement (actors/store.py) only under its
partition's newest lease epoch. The claims and commits on partitions no worker serves, a row a case; a commit's
lock that a newer claim waits for; and a worker whose partition another claimed with a newer epoch, whose batch is
refused, rolled back and left pending, then applied once when it holds the partition anew."""

from __future__ import annotations

import asyncio
import logging

import pytest
from prometheus_client import REGISTRY

from actors import fencing, store
from actors.fencing import FenceRow
from common.ids import random_id
from tests.integration.test_refunds_api import merchant_refund, paid_order

SCOPE = f"fencing-{random_id('t')}"  # a Redis key prefix no worker serves: its partitions are this module's alone


def command(command_id: str) -> store.Rows:
    """A batch that writes one command's dedupe row and nothing else."""
    rows = store.batch_rows([], {}, {}, [], {})
    rows[store.CommandRow] = [store.CommandRow(command_id, "ord_fenced", "hash", b"{}", "create_order", None, None)]
    return rows


async def written(conn, command_id: str) -> bool:
    return await conn.fetchval("SELECT count(*) FROM commands WHERE command_id = $1", command_id) == 1


# Each row: claims made in order (epoch, holder), the epoch a commit is fenced with, whether PostgreSQL accepts it.
@pytest.mark.parametrize("claims,checked,accepted", [
    pytest.param([(3, "a")], 3, True, id="the-holders-epoch"),
    pytest.param([(3, "a"), (3, "a")], 3, True, id="claimed-again-by-its-holder"),
    pytest.param([(3, "a"), (4, "b")], 3, False, id="an-older-epoch-after-a-newer-claim"),
    pytest.param([(3, "a"), (4, "b")], 4, True, id="the-newer-epoch"),
    pytest.param([(4, "b"), (3, "a")], 3, False, id="a-late-claim-of-an-older-epoch"),
    pytest.param([(4, "b"), (3, "a")], 4, True, id="a-late-older-claim-leaves-the-newer"),
    pytest.param([], 1, False, id="never-claimed"),
])
async def test_a_commit_is_accepted_only_under_the_newest_claimed_epoch(pool, claims, checked, accepted, request):
    partition = request.node.callspec.indices["claims"]
    async with pool.acquire() as conn:
        newest = 0
        for epoch, holder in claims:
            # A claim older than one made before is refused, naming the newer epoch.
            assert await fencing.claim(conn, SCOPE, {partition: epoch}, holder) == ({} if epoch >= newest
                                                                             else {partition: newest})
            newest = max(newest, epoch)
        command_id = random_id("cmd")
        try:
            await store.commit(conn, command(command_id), [FenceRow(SCOPE, partition, checked)])
        except fencing.Fenced as refused:
            assert refused.partitions == {partition}
        assert await written(conn, command_id) == accepted
        # A batch of no command is fenced all the same: its outbox rows and events are written only by the holder.
        empty = store.batch_rows([], {}, {}, [], {})
        try:
            await store.commit(conn, empty, [FenceRow(SCOPE, partition, checked), FenceRow(SCOPE, 99, 1)])
            refused = set()
        except fencing.Fenced as fenced:
            refused = fenced.partitions
        assert refused == ({99} if accepted else {partition, 99})


async def test_a_newer_claim_waits_for_a_commit_in_flight_and_refuses_the_next(pool):
    partition = 100
    async with pool.acquire() as old, pool.acquire() as new:
        await fencing.claim(old, SCOPE, {partition: 1}, "old")
        transaction = old.transaction()  # holds the commit in flight, as a slow COMMIT would
        await transaction.start()
        await store.commit(old, command(random_id("cmd")), [FenceRow(SCOPE, partition, 1)])
        claiming = asyncio.create_task(fencing.claim(new, SCOPE, {partition: 2}, "new"))
        backend = new.get_server_pid()
        while not await pool.fetchval("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1",
                                      backend):
            await asyncio.sleep(0.01)
        await transaction.commit()  # the commit in flight lands, before the handover
        assert await claiming == {}
        late = random_id("cmd")
        with pytest.raises(fencing.Fenced):
            await store.commit(old, command(late), [FenceRow(SCOPE, partition, 1)])
        assert not await written(old, late)


async def test_a_batch_under_a_superseded_epoch_is_refused_and_applied_once_by_the_holder(stack, merchant, redis,
                                                                                        keys, caplog):
    order_id = await paid_order(merchant, "30.00")
    partition = keys.partition_of(order_id)
    fenced = "SELECT epoch, holder FROM partition_fences WHERE scope = $1 AND partition = $2"
    holder = (await stack.pool.fetchrow(fenced, keys.prefix, partition))["holder"]
    # Another worker took the partition meanwhile, as the leases script does: the next epoch, claimed in PostgreSQL.
    epoch = await redis.incr(keys.lease_epoch(partition))
    async with stack.pool.acquire() as conn:
        assert await fencing.claim(conn, keys.prefix, {partition: epoch}, "another-worker") == {}
    refused_before = REGISTRY.get_sample_value("actor_fenced_batches_total") or 0
    with caplog.at_level(logging.WARNING, logger="actors.tenure"):
        status, refund = await merchant_refund(merchant, order_id, "5.00")
    # Refused, rolled back and left pending; the worker gave the lease up, took it anew under a newer epoch, and
    # applied the refund once.
    assert status == 201, refund
    assert REGISTRY.get_sample_value("actor_fenced_batches_total") == refused_before + 1
    assert [r.getMessage() for r in caplog.records if "commit refused" in r.getMessage()] == [
        f"worker {holder}: commit refused, partitions [{partition}] are held under a newer lease epoch; "
        f"dropping [{partition}] (the batch was rolled back and stays pending for their holder)"]
    refunds = await stack.pool.fetch("SELECT refund_id FROM refunds WHERE order_id = $1", order_id)
    assert [r["refund_id"] for r in refunds] == [refund["refund_id"]]
    seqs = await stack.pool.fetch("SELECT seq FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    assert [r["seq"] for r in seqs] == list(range(1, len(seqs) + 1))
    fence = await stack.pool.fetchrow(fenced, keys.prefix, partition)
    assert fence["epoch"] > epoch and fence["holder"] == holder
