"""PostgreSQL in a Patroni cluster (three members, etcd, synchronous_mode) named by a multi-host DATABASE_URL,
under 16 merchants creating orders with Idempotency-Keys: the leader's machine lost, the old leader back as a
replica, a planned switchover. Run in this order, on one cluster and one deployment (tests/ha/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import time

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
    fault_at = time.monotonic()
    await fault()
    deadline = fault_at + TTL_S + 30
    while load.first_answer_after(fault_at) is None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(STEADY_S)
    await load.stop()
    await readiness.stop()
    return load, readiness, fault_at, receiver


async def _figures(what: str, service, load: Load, fault_at: float) -> dict:
    procs, client, pool, _probes = service
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


async def test_the_leader_s_machine_lost(cluster: Cluster, service):
    procs, *_ = service
    leader = await cluster.leader()
    assert leader is not None

    async def lose() -> None:
        cluster.lose(leader)

    load, readiness, fault_at, receiver = await _under_load(service, lose)
    try:
        figures = await _figures(f"leader {leader.name} lost", service, load, fault_at)
        assert figures["lost"] == 0 and figures["duplicated"] == 0 and figures["events_with_gaps"] == 0, figures
        assert 0 < figures["seconds_to_first_answer"] <= TTL_S + 5, figures
        assert not _unnamed(load), _unnamed(load)[:5]
        assert not await _delivered(receiver, load)
        assert not _still_running(procs), "a process ended"
        assert not readiness.told_the_truth(fault_at), readiness.told_the_truth(fault_at)
    finally:
        await receiver.stop()


async def test_the_old_leader_rejoins_as_a_replica(cluster: Cluster, service):
    lost = cluster.lost
    started = time.monotonic()
    cluster.run(lost)
    members = await cluster.healthy(90)
    print(f"\n{lost.name} back as a replica after {time.monotonic() - started:.1f} s: "
          + ", ".join(f"{m['name']} {m['role']}" for m in members))
    assert next(m for m in members if m["name"] == lost.name)["role"] in ("replica", "sync_standby")


async def test_a_planned_switchover(cluster: Cluster, service):
    procs, *_ = service
    members = await cluster.healthy(30)
    leader = await cluster.leader()
    candidate = next(m for m in cluster.members if m.name == next(x["name"] for x in members
                                                                  if x["role"] == "sync_standby"))

    async def switch() -> None:
        await asyncio.to_thread(cluster.switchover, leader, candidate)

    load, _readiness, fault_at, receiver = await _under_load(service, switch)
    try:
        figures = await _figures(f"switchover {leader.name} -> {candidate.name}", service, load, fault_at)
        assert figures["lost"] == 0 and figures["duplicated"] == 0 and figures["events_with_gaps"] == 0, figures
        assert not _unnamed(load), _unnamed(load)[:5]
        assert not await _delivered(receiver, load)
        assert not _still_running(procs), "a process ended"
        assert (await cluster.leader()).name == candidate.name
        await cluster.healthy(60)
    finally:
        await receiver.stop()
