"""The single-writer drill (docs/operations.md, Single writer): two actor workers under load that creates orders and
refunds existing ones, several per order; one worker is cut off from Redis (not from PostgreSQL) by a proxy of the
test's own that stops forwarding but keeps its connections open, then healed. PostgreSQL records every commit
(which worker's session committed which partition, under which lease epoch), and the leases are sampled throughout.

Whatever the timing: no commit is accepted from a worker that is not its partition's holder, no partition commits
under an older epoch after a newer one, every order's events are gapless and match its state, every request is
applied once, and the only failures a client sees are 503 and 504."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlparse

import asyncpg
import pytest
import redis.asyncio as aioredis

from common import db_roles
from streams.names import Keys
from tests.conftest import REDIS_URL, RUNTIME_ROLE, owner_url
from tests.integration.helpers import pay
from tests.integration.test_refunds_api import DEST
from tests.support.blackhole import Blackhole
from tests.support.processes import QUICK, created, deployment

TTL_MS = 1000
ORDERS, REFUNDS_EACH, CREATORS = 6, 4, 4

# Every commit's fence check updates its partition's row without moving `claimed_at` (a claim moves it): logged
# with the session that made it, named after its worker (service/processes.py).
_LOG_COMMITS = """
CREATE TABLE drill_commits (n bigserial, partition int, epoch bigint, holder text, committer text,
                            at timestamptz DEFAULT clock_timestamp());
CREATE FUNCTION drill_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.claimed_at = OLD.claimed_at THEN
        INSERT INTO drill_commits (partition, epoch, holder, committer)
        VALUES (NEW.partition, NEW.epoch, NEW.holder, current_setting('application_name'));
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER drill_commit AFTER UPDATE ON partition_fences FOR EACH ROW EXECUTE FUNCTION drill_commit();
"""


async def _log_commits(url: str) -> None:
    """The log and its trigger, made by the schema's owner (the processes' role may create neither), the log
    granted to the processes' role."""
    conn = await asyncpg.connect(owner_url(url))
    try:
        await conn.execute(_LOG_COMMITS)
        await db_roles.grant_runtime(conn, RUNTIME_ROLE)
    finally:
        await conn.close()


async def answered(client, path: str, body: dict, key: str, failed: list[int]) -> dict:
    """A call retried with its Idempotency-Key through 503 and 504, as a merchant's backend would."""
    for _ in range(60):
        status, answer = await client.post(path, body, headers={"Idempotency-Key": key})
        if status in (200, 201):
            return answer
        failed.append(status)
        assert status in (503, 504), (status, answer)
        await asyncio.sleep(0.25)
    raise AssertionError(f"{key} was never answered")


async def sampled(redis, keys: Keys, samples: list, stop: asyncio.Event) -> None:
    while not stop.is_set():
        holders = await redis.mget([keys.lease(p) for p in range(keys.partitions)])
        samples.append((time.monotonic(), [h.decode() if h else None for h in holders]))
        await asyncio.sleep(0.05)


# A cut of three TTLs (the takeover, and the cut worker's return); and one that heals about when the cut worker's
# leases lapse, while its reads, and retried reads, are still in flight.
# Short leases; and clients retrying through the takeover's 503s at once must not meet the key's rate limit, which
# this drill does not test (a 429 is not a takeover's answer).
_DRILL_ENV = {"LEASE_TTL_MS": str(TTL_MS), "RATE_LIMIT_RPS": "100000", "RATE_LIMIT_BURST": "100000"}


@pytest.mark.parametrize("cut_ttls", [3, 1])
async def test_a_worker_cut_off_from_redis_never_commits_beside_the_holder(cut_ttls, tmp_path):
    redis_url = urlparse(REDIS_URL)
    async with Blackhole(redis_url.hostname, redis_url.port or 6379) as proxy, \
            deployment(REDIS_URL, ("web", "actors"), output=tmp_path, env=_DRILL_ENV) \
            as (procs, client, pool):
        await _log_commits(procs.env["DATABASE_URL"])
        procs.start("actors-cut", "actors",
                    env={"REDIS_URL": redis_url._replace(netloc=f"127.0.0.1:{proxy.port}").geturl()})
        keys = Keys(procs.env["REDIS_PREFIX"], int(procs.env["PARTITIONS"]))
        redis = aioredis.from_url(REDIS_URL)
        cut_pid = str(procs.procs["actors-cut"].pid)

        def holders_of(sample) -> set[str]:
            return {h.split("-")[-2] for h in sample[1] if h}

        samples: list = []
        stop_sampling = asyncio.Event()
        sampler = asyncio.create_task(sampled(redis, keys, samples, stop_sampling))
        try:
            while not any(cut_pid in holders_of(s) for s in samples):  # the cut worker took its share
                await asyncio.sleep(0.1)
            failed: list[int] = []
            before = await pool.fetchval("SELECT count(*) FROM orders")  # the first answer's
            paid = []
            for n in range(ORDERS):
                order_id = (await answered(client, QUICK, {"amount": f"100.{n:02d}"}, f"paid-{n}", failed))["order_id"]
                assert (await pay(client, order_id, f"100.{n:02d}"))[0] == 201
                paid.append(order_id)

            stop = asyncio.Event()

            async def creator(c: int) -> list[str]:
                made = []
                while not stop.is_set():
                    body = await created(client, f"new-{c}-{len(made)}", amount=f"{c + 1}.{len(made):02d}",
                                         failed=(creation_failures := []))
                    failed.extend(status for status, _ in creation_failures)
                    made.append(body["order_id"])
                return made

            async def refunder(order_id: str) -> list[str]:
                refunds = []
                for r in range(REFUNDS_EACH):
                    await asyncio.sleep(cut_ttls * TTL_MS / 1000 / REFUNDS_EACH)  # before, during and after the cut
                    body = {"order_id": order_id, "amount": f"1.{r:02d}", "reason": "damaged", **DEST}
                    refunds.append((await answered(client, f"/b2b/v1/merchants/{client.merchant_id}/refunds", body,
                                                   f"refund-{order_id}-{r}", failed))["refund_id"])
                return refunds

            load = [asyncio.create_task(creator(c)) for c in range(CREATORS)]
            refunding = [asyncio.create_task(refunder(order_id)) for order_id in paid]
            await asyncio.sleep(0.5)
            cut_at = time.monotonic()
            proxy.cut()
            await asyncio.sleep(cut_ttls * TTL_MS / 1000)
            proxy.heal()
            healed_at = time.monotonic()
            await asyncio.sleep(2.0)
            stop.set()
            made = [order_id for orders in await asyncio.gather(*load) for order_id in orders]
            refunded = await asyncio.gather(*refunding)
        finally:
            stop_sampling.set()
            await sampler
            await redis.aclose()

        # The drill did what it says: both workers committed, and a long cut handed the cut worker's partitions over.
        commits = await pool.fetch("SELECT partition, epoch, holder, committer FROM drill_commits ORDER BY n")
        committers = {c["committer"].split("-")[-2] for c in commits}
        assert cut_pid in committers and len(committers) == 2
        if cut_ttls > 1:
            during = [s for s in samples if cut_at + TTL_MS / 1000 * 2 < s[0] < healed_at]
            assert during and all(cut_pid not in holders_of(s) and None not in s[1] for s in during[-3:])

        # Single writer: every accepted commit came from its epoch's holder, and no partition went back in epochs.
        assert [c for c in commits if c["committer"] != f"actors {c['holder']}"[:63]] == []
        last: dict[int, int] = {}
        for c in commits:
            assert c["epoch"] >= last.get(c["partition"], 0), c
            last[c["partition"]] = c["epoch"]

        # Nothing lost, nothing applied twice, and only 503/504 while the partitions changed hands.
        assert set(failed) <= {503, 504}
        assert len(set(made)) == len(made)
        assert await pool.fetchval("SELECT count(*) FROM orders") == before + ORDERS + len(made)
        for order_id, refund_ids in zip(paid, refunded):
            assert len(set(refund_ids)) == REFUNDS_EACH
            stored = await pool.fetch("SELECT refund_id FROM refunds WHERE order_id = $1", order_id)
            assert sorted(r["refund_id"] for r in stored) == sorted(refund_ids)

        # Each order's events are gapless and its state is as they leave it.
        mismatched = await pool.fetch("""
            SELECT o.order_id, o.version, array_agg(e.seq ORDER BY e.seq) AS seqs,
                   count(*) FILTER (WHERE e.type = 'payment.refund.requested') AS refund_events,
                   (SELECT count(*) FROM refunds r WHERE r.order_id = o.order_id) AS refunds
            FROM orders o JOIN events e USING (order_id) GROUP BY o.order_id, o.version
            HAVING array_agg(e.seq ORDER BY e.seq) <> array(SELECT generate_series(1, o.version))
                OR count(*) FILTER (WHERE e.type = 'payment.refund.requested')
                   <> (SELECT count(*) FROM refunds r WHERE r.order_id = o.order_id)""")
        assert mismatched == []
    cut_log = (tmp_path / "actors-cut.err").read_text()
    if cut_ttls > 1:
        assert "not renewed within their TTL" in cut_log, cut_log[-3000:]
