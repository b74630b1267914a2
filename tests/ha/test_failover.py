"""PostgreSQL in a Patroni cluster (three members, etcd, synchronous_mode) named by a multi-host DATABASE_URL,
under 16 merchants creating orders with Idempotency-Keys: the leader's machine lost, the old leader back as a
replica, a planned switchover, the leader's machine cut off (frozen: its connections hang rather than reset). Run in
this order, on one cluster and one deployment (tests/ha/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import time

from common import db
from tests.ha.cluster import TTL_S, Cluster
from tests.ha.load import Load, Readiness
from tests.webhooks.support import Receiver, register

STEADY_S = 3  # of load before the fault, and after the first answer that follows it


async def _under_load(service, fault) -> tuple[Load, Readiness, float, Receiver]:
    procs, client, pool, probes = service
    receiver = await Receiver().start()
    await register(client, receiver.url, ["order.created"])
    load, readiness = Load(client), Readiness(probes)
    load.start()
    readiness.start()
    await asyncio.sleep(STEADY_S)
    await asyncio.to_thread(fault)
    fault_at = time.monotonic()  # the fault done: a switchover complete, a machine's processes killed or stopped
    deadline = fault_at + TTL_S + 30
    while load.first_answer_after(fault_at) is None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(STEADY_S)
    await load.stop()
    await readiness.stop()
    return load, readiness, fault_at, receiver


async def _figures(what: str, service, load: Load, fault_at: float) -> dict:
    procs, client, _pool, _probes = service
    # A connection of its own, to whichever member is the primary now: the fixture's pool may hold one to a member
    # that is gone or frozen.
    conn = await db.connect_one(procs.env["DATABASE_URL"])
    try:
        return await _counted(what, conn, client, load, fault_at)
    finally:
        await conn.close()


async def _counted(what: str, pool, client, load: Load, fault_at: float) -> dict:
    keys = [a.key for a in load.acks]
    rows = await pool.fetch("SELECT external_ref, array_agg(order_id) AS ids FROM orders"
                            " WHERE merchant_id = $1 AND external_ref = ANY($2) GROUP BY external_ref",
                            client.merchant_id, keys)
    stored = {r["external_ref"]: r["ids"] for r in rows}
    seqs = await pool.fetch("SELECT order_id, array_agg(seq ORDER BY seq) AS seqs FROM events"
                            " WHERE order_id = ANY($1) GROUP BY order_id", [a.order_id for a in load.acks])
    figures = {
        "acknowledged": len(load.acks),
        "lost": sum(1 for a in load.acks if a.order_id not in stored.get(a.key, [])),
        "duplicated": sum(1 for ids in stored.values() if len(ids) > 1),
        "events_with_gaps": sum(1 for r in seqs if r["seqs"] != list(range(1, len(r["seqs"]) + 1))),
        "seconds_to_first_answer": round(load.first_answer_after(fault_at) or -1, 1),
        "longest_silence_s": round(load.longest_silence(), 1),
        "failed_answers": _count([status for status, _ in load.failed]),
    }
    print(f"\n{what}: {json.dumps(figures)}")
    return figures


def _count(statuses: list[int]) -> dict[str, int]:
    return {str(s): statuses.count(s) for s in sorted(set(statuses))}


def _unnamed(load: Load) -> list:
    """Failed answers that are not a 503 or 504 naming the command a retry is answered by."""
    return [(status, body) for status, body in load.failed
            if status not in (503, 504) or not (body or {}).get("error", {}).get("command_id", "").startswith("cmd_")]


async def _delivered(receiver: Receiver, load: Load, timeout: float = 30) -> set[str]:
    """The acknowledged orders whose order.created no delivery has brought yet, after waiting up to `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        got = {json.loads(r.body)["data"]["order_id"] for r in receiver.requests}
        missing = {a.order_id for a in load.acks} - got
        if not missing or time.monotonic() > deadline:
            return missing
        await asyncio.sleep(0.5)


def _still_running(procs) -> list[str]:
    return [name for name, proc in procs.procs.items() if proc.poll() is not None]


async def _survived(what: str, service, fault, *, leader_lost: bool = True) -> None:
    """The fault under load, and what every such fault is held to. When it takes the leader's machine, the first
    answer comes within the TTL and 5 s, and every process's /readyz says 503 naming postgres meanwhile."""
    procs, *_ = service
    load, readiness, fault_at, receiver = await _under_load(service, fault)
    try:
        figures = await _figures(what, service, load, fault_at)
        assert figures["lost"] == 0 and figures["duplicated"] == 0 and figures["events_with_gaps"] == 0, figures
        assert not _unnamed(load), _unnamed(load)[:5]
        assert not await _delivered(receiver, load)
        assert not _still_running(procs), "a process ended"
        if leader_lost:
            assert 0 < figures["seconds_to_first_answer"] <= TTL_S + 5, figures
            assert not readiness.told_the_truth(fault_at), readiness.told_the_truth(fault_at)
    finally:
        await receiver.stop()


async def test_the_leader_s_machine_lost(cluster: Cluster, service):
    leader = await cluster.leader()
    await _survived(f"leader {leader.name} lost", service, lambda: cluster.lose(leader))


async def test_the_old_leader_rejoins_as_a_replica(cluster: Cluster, service):
    lost = cluster.lost
    started = time.monotonic()
    cluster.run(lost)
    members = await cluster.healthy(90)
    print(f"\n{lost.name} back as a replica after {time.monotonic() - started:.1f} s: "
          + ", ".join(f"{m['name']} {m['role']}" for m in members))
    assert next(m for m in members if m["name"] == lost.name)["role"] in ("replica", "sync_standby")


async def test_a_planned_switchover(cluster: Cluster, service):
    members = await cluster.healthy(30)
    leader = await cluster.leader()
    standby = next(m["name"] for m in members if m["role"] == "sync_standby")
    candidate = next(m for m in cluster.members if m.name == standby)
    await _survived(f"switchover {leader.name} -> {candidate.name}", service,
                    lambda: cluster.switchover(leader, candidate), leader_lost=False)
    assert (await cluster.leader()).name == candidate.name
    await cluster.healthy(60)


async def test_the_leader_s_machine_cut_off(cluster: Cluster, service):
    """Its processes stopped, not killed: what the service's statements and connections to it wait for never comes.
    Statement timeouts end the waits, and new connections ask every host at once (common/db.py)."""
    await cluster.healthy(60)
    leader = await cluster.leader()
    try:
        await _survived(f"leader {leader.name} cut off", service, lambda: cluster.freeze(leader))
    finally:
        cluster.lose(leader)
    cluster.run(leader)
    await cluster.healthy(90)
