"""The service's processes, unchanged, on a Redis Cluster of three primaries with a replica each.

`.ci/redis-cluster` starts the cluster on ports 7001-7006 (this suite starts it too when it is down). The
processes run as real subprocesses: web, two actor workers, the scheduler and the webhooks dispatcher.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from streams.connection import connect
from tests.integration.helpers import USDT
from tests.support.processes import created, deployment
from tests.webhooks.support import Receiver, register

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_URL = os.environ.get("TEST_REDIS_CLUSTER_URL", "redis+cluster://127.0.0.1:7001")
PORTS = range(7001, 7007)
DEST = {"refund_to_address": "0x52908400098527886E0F7030069857D2E4169EE7", "refund_network": "sepolia",
        "refund_token_address": "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"}


@pytest.fixture(scope="module")
def cluster() -> str:
    if "TEST_REDIS_CLUSTER_URL" not in os.environ:
        subprocess.run([str(ROOT / ".ci" / "redis-cluster")], check=True, timeout=60)
    return CLUSTER_URL


@pytest.fixture
async def service(cluster):
    async with deployment(cluster, ("web", "actors-1", "actors-2", "scheduler", "webhooks")) as deployed:
        yield deployed


async def test_session_payment_refund_and_webhook(service):
    svc, client, pool = service
    receiver = await Receiver().start()
    try:
        await register(client, receiver.url, ["payment.settled", "payment.refund.approved"])
        session = await created(client, "flow-1", "10.00")
        order_id = session["order_id"]
        status, paid = await client.post(f"/b2b/v1/test-helpers/orders/{order_id}/payments",
                                         {"amount": "10.00", "network": "sepolia", "token_address": USDT,
                                          "tx_hash": "0x" + secrets.token_hex(32)})
        assert status == 201 and paid["status"] == "PAID", paid
        status, refund = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds",
                                           {"order_id": order_id, "amount": "4.00", "reason": "damaged", **DEST})
        assert status == 201, refund
        status, order = await client.get(f"/b2b/v1/orders/{order_id}")
        assert status == 200 and order["status"] == "PAID"
        delivered = await receiver.wait_for(2, timeout=20)
        assert sorted(json.loads(msg.body)["type"] for msg in delivered) == ["payment.refund.approved",
                                                                             "payment.settled"]
    finally:
        await receiver.stop()


async def test_a_write_takes_its_token_in_a_call_of_its_own(service):
    """A script on a cluster touches one slot: the caller's bucket is not in its command's, so a write takes its
    token before its command is sent, and still answers where its bucket stands."""
    _svc, client, _pool = service
    path, body = "/b2b/v1/checkout-sessions/quick", json.dumps({"amount": "1.00"}).encode()
    headers = await client.fresh_headers("POST", path, body)
    async with client.http.post(client.base_url + path, data=body, headers=headers) as resp:
        assert resp.status == 201, await resp.text()
        assert 0 <= int(resp.headers["X-RateLimit-Remaining"]) < int(resp.headers["X-RateLimit-Limit"])


async def test_a_killed_worker_s_partitions_are_taken_over(service):
    svc, client, pool = service
    svc.procs["actors-1"].kill()
    sessions = await asyncio.gather(*[created(client, f"takeover-{n}", f"{n + 1}.00") for n in range(40)])
    assert len({s["order_id"] for s in sessions}) == 40
    count = await pool.fetchval("SELECT count(*) FROM orders WHERE order_id = ANY($1)", [s["order_id"] for s in sessions])
    assert count == 40


async def _failover(port: int) -> None:
    """Promote one replica (manual failover: it takes over its primary's slots after catching up)."""
    redis = connect(f"redis://127.0.0.1:{port}")
    try:
        await redis.execute_command("CLUSTER", "FAILOVER")
        for _ in range(100):
            if (await redis.execute_command("ROLE"))[0] == b"master":
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"the replica on {port} was not promoted")
    finally:
        await redis.aclose()


async def test_a_primary_failed_over_in_the_middle_of_traffic_loses_nothing(service):
    svc, client, pool = service
    replicas = []
    for port in PORTS:
        redis = connect(f"redis://127.0.0.1:{port}")
        try:
            if (await redis.execute_command("ROLE"))[0] == b"slave":
                replicas.append(port)
        finally:
            await redis.aclose()
    assert replicas, "the cluster has no replica to promote"

    async def later(n: int) -> dict:
        await asyncio.sleep(n * 0.02)  # three seconds of traffic, the failover a second in
        return await created(client, f"failover-{n}", f"{n + 1}.00")

    traffic = [asyncio.create_task(later(n)) for n in range(150)]
    await asyncio.sleep(1)
    await _failover(replicas[0])
    assert not all(t.done() for t in traffic)
    sessions = await asyncio.gather(*traffic)

    order_ids = [s["order_id"] for s in sessions]
    assert len(set(order_ids)) == 150
    stored = await pool.fetch("SELECT order_id, status FROM orders WHERE order_id = ANY($1)", order_ids)
    assert len(stored) == 150 and {r["status"] for r in stored} == {"PENDING"}
    for session in sessions[::25]:  # acknowledged answers read back the same
        status, order = await client.get(f"/b2b/v1/orders/{session['order_id']}")
        assert status == 200 and order["order_id"] == session["order_id"]
