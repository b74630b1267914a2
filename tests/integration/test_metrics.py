"""Metrics that move with traffic, scraped as Prometheus does, and the probes of processes without a port of their
own (the webhook and watcher metrics are tested beside their fixtures, in tests/webhooks and tests/watchers)."""

from __future__ import annotations

import os
import secrets

import aiohttp
import asyncpg
from cryptography.fernet import Fernet

from actors import gauges
from common.db import MIGRATIONS
from streams.names import ACTORS_GROUP, Keys
from tests.conftest import REDIS_URL, database
from tests.integration.helpers import quick
from tests.support.metrics import here, labelled, probe, scrape, value
from tests.support.processes import Processes, created, deployment, free_port

ORDER = {"route": "/b2b/v1/orders/{order_id}", "method": "GET", "status": "404"}


async def test_web_counts_requests_by_route_pattern_and_status(stack, merchant):
    before = await scrape(stack.http, stack.base_url + "/metrics")
    for n in range(3):
        status, _ = await merchant.get(f"/b2b/v1/orders/ord_missing{n}")
        assert status == 404
    async with stack.http.get(stack.base_url + "/no/such/page/42") as resp:
        assert resp.status == 404
    after = await scrape(stack.http, stack.base_url + "/metrics")

    assert value(after, "http_requests_total", **ORDER) - value(before, "http_requests_total", **ORDER) == 3
    count = "http_request_duration_seconds_count"
    assert value(after, count, **ORDER) - value(before, count, **ORDER) == 3
    assert value(after, "http_request_duration_seconds_bucket", le="+Inf", **ORDER) == value(after, count, **ORDER)
    unmatched = {"route": "unmatched", "method": "GET", "status": "404"}
    assert value(after, "http_requests_total", **unmatched) - value(before, "http_requests_total", **unmatched) == 1
    assert "ord_missing" not in after and "/no/such" not in after  # never the raw path


async def test_commands_move_the_round_trip_and_the_actor_histograms(stack, merchant):
    before = await scrape(stack.http, stack.base_url + "/metrics")
    orders = [(await quick(merchant))["order_id"] for _ in range(3)]
    assert (await merchant.patch(f"/b2b/v1/orders/{orders[0]}/cancel"))[0] == 200
    assert (await merchant.patch(f"/b2b/v1/orders/{orders[0]}/cancel"))[0] == 409  # the actor refuses it
    after = await scrape(stack.http, stack.base_url + "/metrics")

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("command_round_trip_seconds_count", outcome="answered") == 5
    assert moved("actor_batch_size_sum") == 5  # the stack's worker runs in this process
    assert moved("actor_batch_size_count") >= 1 and moved("actor_commit_seconds_count") >= 1
    assert (moved("actor_commands_total", outcome="ok"), moved("actor_commands_total", outcome="refused")) == (4, 1)
    assert moved("http_requests_total", route="/b2b/v1/checkout-sessions/quick", method="POST", status="201") == 3


async def test_partition_gauges_count_what_waits_with_no_worker(pool, redis, settings):
    keys = Keys(f"{settings.redis_prefix}gauges-{secrets.token_hex(3)}:", 2)
    for _ in range(3):  # partition 1 never had a reader
        await redis.xadd(keys.commands(1), {"m": b"{}"})
    await redis.xgroup_create(keys.commands(0), ACTORS_GROUP, id="0", mkstream=True)
    for _ in range(2):
        await redis.xadd(keys.commands(0), {"m": b"{}"})
    await redis.xreadgroup(ACTORS_GROUP, "gone", {keys.commands(0): ">"}, count=1)  # read, never acknowledged
    await redis.xadd(keys.dead_letters, {"stream": keys.commands(1), "error": "test"})

    await gauges.refresh(pool, redis, keys, settings.lease_ttl_ms)
    text = here()
    assert labelled(text, "actor_partition_lag", "partition") == {"0": 1, "1": 3}
    assert labelled(text, "actor_partition_pending", "partition") == {"0": 1, "1": 0}
    assert labelled(text, "actor_partition_leased", "partition") == {"0": 0, "1": 0}
    assert value(text, "dead_letters", stream=keys.commands(1)) == 1
    assert value(text, "actor_outbox_rows") >= 0 and value(text, "actor_outbox_oldest_seconds") >= 0

    await redis.delete(keys.dead_letters)
    await gauges.refresh(pool, redis, keys, settings.lease_ttl_ms)
    assert value(here(), "dead_letters", stream=keys.commands(1)) == 0  # dropped: back to nothing, not stale


async def test_worker_processes_serve_metrics_and_probes_on_their_port():
    actors_port, webhooks_port = free_port(), free_port()
    async with deployment(REDIS_URL, ("web", "actors", "webhooks"),
                          args={"actors": ("--metrics-port", str(actors_port)),
                           "webhooks": ("--metrics-port", str(webhooks_port))}) as (_procs, client, _pool), \
            aiohttp.ClientSession() as http:
        actors = f"http://127.0.0.1:{actors_port}"
        assert await probe(http, actors + "/healthz") == (200, {"status": "ok"})
        assert await probe(http, actors + "/readyz") == (
            200, {"status": "ready", "checks": {"postgres": "ok", "redis": "ok", "clock": "ok", "leases": "ok"}})
        before = await scrape(http, actors + "/metrics")
        for n in range(3):
            await created(client, f"metrics-{n}", amount=f"3.0{n}")
        after = await scrape(http, actors + "/metrics")
        assert value(after, "actor_batch_size_sum") - value(before, "actor_batch_size_sum") >= 3
        assert value(after, "actor_commit_seconds_count") > value(before, "actor_commit_seconds_count")
        assert value(after, "actor_commands_total", outcome="ok") - value(before, "actor_commands_total", outcome="ok") >= 3
        assert set(labelled(after, "actor_partition_lag", "partition")) == {str(p) for p in range(8)}

        webhooks = f"http://127.0.0.1:{webhooks_port}"
        assert (await probe(http, webhooks + "/readyz"))[0] == 200
        assert "webhook_deliveries_total" in await scrape(http, webhooks + "/metrics")


def _worker(process: str, database_url: str, redis_url: str) -> tuple[Processes, str]:
    port = free_port()
    env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=redis_url, METRICS_PORT=str(port),
               REDIS_PREFIX=f"pr{secrets.token_hex(3)}:", SERVICE_MASTER_KEY=Fernet.generate_key().decode(),
               LOG_LEVEL="CRITICAL")
    procs = Processes(env, "")
    procs.start(process, process)
    return procs, f"http://127.0.0.1:{port}"


async def test_readyz_of_a_worker_names_an_unreachable_redis(database_url):
    procs, base = _worker("actors", database_url, "redis://127.0.0.1:1/0")
    try:
        async with aiohttp.ClientSession() as http:
            assert (await probe(http, base + "/healthz"))[0] == 200
            status, body = await probe(http, base + "/readyz")
    finally:
        procs.stop()
    assert status == 503 and body["status"] == "not_ready"
    assert body["checks"]["postgres"] == "ok"
    assert body["checks"]["redis"].startswith("unreachable") and body["checks"]["leases"].startswith("unreachable")


async def test_readyz_of_a_worker_names_a_missing_migration():
    last = max(MIGRATIONS.glob("*.sql")).name
    async with database(f"svc_ready_{secrets.token_hex(4)}") as url:
        conn = await asyncpg.connect(url)
        await conn.execute("DELETE FROM schema_migrations WHERE name = $1", last)
        await conn.close()
        procs, base = _worker("scheduler", url, REDIS_URL)
        try:
            async with aiohttp.ClientSession() as http:
                status, body = await probe(http, base + "/readyz")
        finally:
            procs.stop()
    assert (status, body) == (503, {"status": "not_ready",
                                    "checks": {"postgres": f"migrations missing: {last}", "redis": "ok",
                                               "clock": "ok"}})
