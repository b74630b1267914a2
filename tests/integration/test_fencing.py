"""Fencing in the commit (actors/fencing.py): PostgreSQL accepts a batch only under its partition's newest lease
epoch. The claims and checks on partitions no worker serves, a row a case; a check's lock that a newer claim waits
for; and a worker whose partition another claimed with a newer epoch, whose batch is refused, rolled back and left
pending, then applied once when it holds the partition anew."""

from __future__ import annotations

import asyncio
import logging

import pytest
from prometheus_client import REGISTRY

from actors import fencing
from tests.integration.test_refunds_api import merchant_refund, paid_order

UNSERVED = 1000  # far above any test's partition count: no worker claims it


# Each row: claims made in order (epoch, holder), the epoch a commit checks, whether PostgreSQL accepts it.
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
    partition = UNSERVED + request.node.callspec.indices["claims"]
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM partition_fences WHERE partition = $1", partition)
        newest = 0
        for epoch, holder in claims:
            # A claim older than one made before is refused, naming the newer epoch.
            assert await fencing.claim(conn, {partition: epoch}, holder) == ({} if epoch >= newest
                                                                             else {partition: newest})
            newest = max(newest, epoch)
        await conn.execute("CREATE TEMP TABLE IF NOT EXISTS written (n int)")
        try:
            async with conn.transaction():
                await fencing.check_fences(conn, {(partition, checked)})
                await conn.execute("INSERT INTO written VALUES (1)")
        except fencing.Fenced as refused:
            assert refused.partitions == {partition}
        assert await conn.fetchval("SELECT count(*) FROM written") == (1 if accepted else 0)
        await conn.execute("DROP TABLE written")


async def test_a_newer_claim_waits_for_a_commit_in_flight_and_refuses_the_next(pool):
    partition = UNSERVED + 100
    async with pool.acquire() as old, pool.acquire() as new:
        await old.execute("DELETE FROM partition_fences WHERE partition = $1", partition)
        await fencing.claim(old, {partition: 1}, "old")
        transaction = old.transaction()
        await transaction.start()
        await fencing.check_fences(old, {(partition, 1)})
        claiming = asyncio.create_task(fencing.claim(new, {partition: 2}, "new"))
        backend = new.get_server_pid()
        while not await pool.fetchval("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1",
                                      backend):
            await asyncio.sleep(0.01)
        await transaction.commit()  # the commit in flight lands, before the handover
        assert await claiming == {}
        with pytest.raises(fencing.Fenced):
            async with old.transaction():
                await fencing.check_fences(old, {(partition, 1)})


async def test_a_batch_under_a_superseded_epoch_is_refused_and_applied_once_by_the_holder(stack, merchant, redis,
                                                                                        keys, caplog):
    order_id = await paid_order(merchant, "30.00")
    partition = keys.partition_of(order_id)
    holder = await stack.pool.fetchval("SELECT holder FROM partition_fences WHERE partition = $1", partition)
    # Another worker took the partition meanwhile, as the leases script does: the next epoch, claimed in PostgreSQL.
    epoch = await redis.incr(keys.lease_epoch(partition))
    async with stack.pool.acquire() as conn:
        assert await fencing.claim(conn, {partition: epoch}, "another-worker") == {}
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
    fence = await stack.pool.fetchrow("SELECT epoch, holder FROM partition_fences WHERE partition = $1", partition)
    assert fence["epoch"] > epoch and fence["holder"] == holder
