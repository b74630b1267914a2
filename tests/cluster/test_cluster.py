"""The service's processes, unchanged, on a Redis Cluster of three primaries with a replica each.

`.ci/redis-cluster` starts the cluster on ports 7001-7006 (this suite starts it too when it is down). The
processes run as real subprocesses: web, two actor workers, the scheduler and the webhooks dispatcher.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from cryptography.fernet import Fernet

from service import db, merchants
from service.secrets import Vault
from streams.connection import connect
from tests.conftest import database
from tests.support.client import Signed
from tests.webhooks.support import Receiver, register

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_URL = os.environ.get("TEST_REDIS_CLUSTER_URL", "redis+cluster://127.0.0.1:7001")
PORTS = range(7001, 7007)
QUICK = "/b2b/v1/checkout-sessions/quick"
DEST = {"refund_to_address": "0x52908400098527886E0F7030069857D2E4169EE7", "refund_network": "ethereum",
        "refund_token_address": "0xdAC17F958D2ee523a2206206994597C13D831ec7"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster() -> str:
    if "TEST_REDIS_CLUSTER_URL" not in os.environ:
        subprocess.run([str(ROOT / ".ci" / "redis-cluster")], check=True, timeout=60)
    return CLUSTER_URL


class Service:
    """The processes of one deployment on the cluster, with a database and key prefix of their own."""

    def __init__(self, env: dict[str, str], base_url: str):
        self.env, self.base_url = env, base_url
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, *args: str) -> subprocess.Popen:
        self.procs[name] = subprocess.Popen([sys.executable, "-m", "service", *args], env=self.env, cwd=ROOT)
        return self.procs[name]

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
async def service(cluster):
    async with database(f"svc_cluster_{secrets.token_hex(4)}") as url:
        port = _free_port()
        env = dict(os.environ, DATABASE_URL=url, REDIS_URL=cluster, REDIS_PREFIX=f"cl{secrets.token_hex(3)}:",
                   PARTITIONS="8", LEASE_TTL_MS="1500", REPLY_TIMEOUT_S="5", PORT=str(port),
                   SERVICE_MASTER_KEY=Fernet.generate_key().decode(), LOG_LEVEL="WARNING",
                   WEBHOOK_SWEEP_INTERVAL_S="0.2", WEBHOOK_RECLAIM_IDLE_MS="500")
        svc = Service(env, f"http://127.0.0.1:{port}")
        svc.start("web", "web")
        svc.start("actors-1", "actors")
        svc.start("actors-2", "actors")
        svc.start("scheduler", "scheduler")
        svc.start("webhooks", "webhooks")
        pool = await db.connect(url, min_size=1, max_size=4)
        http = aiohttp.ClientSession()
        try:
            pair = await merchants.create(pool, Vault(env["SERVICE_MASTER_KEY"].encode()), "Cluster")
            client = Signed(http, svc.base_url, pair.public_key, pair.secret_key, pair.merchant_id)
            await _until_answered(client)
            yield svc, client, pool
        finally:
            svc.stop()
            await http.close()
            await pool.close()


async def _until_answered(client: Signed, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            status, body = await client.post(QUICK, {"amount": "1.00"})
            if status == 201:
                return
        except aiohttp.ClientError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the service on the cluster never answered")
        await asyncio.sleep(0.2)


async def _created(client: Signed, key: str, amount: str = "2.00", attempts: int = 40) -> dict:
    """A quick session, retried with its Idempotency-Key through 503 and 504 answers, as a merchant's
    backend would. Concurrent calls differ in amount: the client signs identical requests a second apart."""
    for _ in range(attempts):
        try:
            status, body = await client.post(QUICK, {"amount": amount}, headers={"Idempotency-Key": key})
        except aiohttp.ClientError:
            status, body = 0, None
        if status == 201:
            return body
        assert status in (0, 503, 504), (status, body)
        if status in (503, 504):
            assert "command_id" in body["error"] or body["error"]["code"] == "service_unavailable", body
        await asyncio.sleep(0.25)
    raise AssertionError(f"{key} was never created")


async def test_session_payment_refund_and_webhook(service):
    svc, client, pool = service
    receiver = await Receiver().start()
    try:
        await register(client, receiver.url, ["payment.settled", "payment.refund.approved"])
        session = await _created(client, "flow-1", "10.00")
        order_id = session["order_id"]
        status, paid = await client.post(f"/b2b/v1/test-helpers/orders/{order_id}/payments",
                                         {"amount": "10.00", "network": "ethereum", "token_address": "0xT",
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


async def test_a_killed_worker_s_partitions_are_taken_over(service):
    svc, client, pool = service
    svc.procs["actors-1"].kill()
    sessions = await asyncio.gather(*[_created(client, f"takeover-{n}", f"{n + 1}.00") for n in range(40)])
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
        return await _created(client, f"failover-{n}", f"{n + 1}.00")

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
