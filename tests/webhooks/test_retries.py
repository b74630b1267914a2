"""Retries on an injected clock: backoff, giving up, disabling a dead endpoint, redelivery and the log."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from tests.integration.helpers import quick
from tests.webhooks.support import Clock, pump, register
from webhooks.schedule import GIVE_UP_AFTER


async def delivery_row(stack, endpoint_id: str):
    return await stack.pool.fetchrow(
        "SELECT delivery_id, status, attempts, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = $1"
        " ORDER BY created_at LIMIT 1", endpoint_id)


async def log_of(client, **filters) -> list[dict]:
    query = "&".join(f"{k}={v}" for k, v in filters.items())
    status, listing = await client.get(f"/b2b/v1/merchants/{client.merchant_id}/webhook-deliveries?{query}")
    assert status == 200, listing
    return listing["data"]


async def test_three_failures_then_success_is_four_attempts_at_growing_intervals(stack, merchant, receiver, dispatcher):
    clock = Clock()
    r = await receiver([500, 503, 502], default=200)
    endpoint = await register(merchant, r.url, ["order.created"])
    d = await dispatcher(clock=clock)
    await quick(merchant)
    await pump(d, lambda: len(r.requests) == 1)
    for n in (2, 3, 4):
        due = (await delivery_row(stack, endpoint["id"]))["next_attempt_at"]
        await d.sweep()
        await d.drain()
        assert len(r.requests) == n - 1, "nothing is sent before it is due"
        clock.set(due)
        await pump(d, lambda count=n: len(r.requests) == count)
    row = await delivery_row(stack, endpoint["id"])
    assert (row["status"], row["attempts"], row["next_attempt_at"]) == ("succeeded", 4, None)
    assert len({req.body for req in r.requests}) == 1
    assert len({req.headers["x-service-event-id"] for req in r.requests}) == 1
    [delivery] = await log_of(merchant, endpoint_id=endpoint["id"])
    attempts = delivery["attempts"]
    assert [a["status_code"] for a in attempts] == [500, 503, 502, 200]
    assert [a["succeeded"] for a in attempts] == [False, False, False, True]
    times = [datetime.fromisoformat(a["attempted_at"]) for a in attempts]
    gaps = [(later - earlier).total_seconds() for earlier, later in zip(times, times[1:])]
    assert gaps == [60, 120, 240]  # 1 min doubling (jitter pinned to 1.0 by the fixture)
    signed_at = [int(req.headers["x-service-timestamp"]) for req in r.requests]
    assert signed_at == sorted(signed_at) and signed_at[-1] - signed_at[0] == 420
    assert all(a["latency_ms"] >= 0 and a["response_body"] == "received" for a in attempts)
    assert attempts[0]["request_headers"]["X-Service-Event-Id"] == delivery["event_id"]
    assert json.loads(delivery["request_body"])["id"] == delivery["event_id"]
    status, current = await merchant.get(f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints/{endpoint['id']}")
    assert current["failing_since"] is None and current["status"] == "enabled"


async def test_jitter_spreads_each_wait(stack, merchant, receiver, dispatcher):
    clock = Clock()
    r = await receiver(default=500)
    endpoint = await register(merchant, r.url, ["order.created"])
    d = await dispatcher(clock=clock, jitter=lambda: 1.2)
    await quick(merchant)
    await pump(d, lambda: len(r.requests) == 1)
    row = await delivery_row(stack, endpoint["id"])
    assert (row["next_attempt_at"] - clock()).total_seconds() == pytest.approx(72)


async def test_never_succeeding_endpoint_ends_disabled_with_its_event(stack, merchant, receiver, dispatcher):
    clock = Clock()
    dead, ops = await receiver(default=500), await receiver()
    endpoint = await register(merchant, dead.url, ["order.created"])
    watcher = await register(merchant, ops.url, ["webhook_endpoint.disabled"])
    d = await dispatcher(clock=clock)
    await quick(merchant)
    await pump(d, lambda: len(dead.requests) == 1)
    first_at = clock()
    while (row := await delivery_row(stack, endpoint["id"]))["status"] == "pending":
        clock.set(row["next_attempt_at"])
        await pump(d, lambda: len(dead.requests) > row["attempts"])
    assert (row["status"], row["attempts"]) == ("failed", 16)
    assert clock() - first_at >= GIVE_UP_AFTER
    status, current = await merchant.get(f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints/{endpoint['id']}")
    assert (current["status"], current["disabled_reason"]) == ("disabled", "failing")
    # The merchant is told: an event, delivered to its other endpoint and readable from the events API.
    await pump(d, lambda: len(ops.requests) == 1)
    [told] = ops.requests
    event = json.loads(told.body)
    assert event["type"] == "webhook_endpoint.disabled"
    assert event["data"]["webhook_endpoint_id"] == endpoint["webhook_endpoint_id"] == event["data"]["endpoint_id"]
    assert event["data"]["disabled_reason"] == "failing"
    status, listing = await merchant.get("/b2b/v1/events?type=webhook_endpoint.disabled")
    assert status == 200 and [e["id"] for e in listing["data"]] == [event["id"]]
    status, one = await merchant.get(f"/b2b/v1/events/{event['id']}")
    assert status == 200 and one == event
    assert watcher["id"] != endpoint["id"]
    # No more attempts go to a disabled endpoint.
    await quick(merchant)
    clock.advance(3600)
    await pump(d, lambda: False, timeout=0.5)
    assert len(dead.requests) == 16


@pytest.mark.parametrize("answer,retried", [(400, False), (401, False), (410, False), (408, True), (429, True),
                                            (301, True), (500, True)])
async def test_which_answers_are_retried(stack, merchant, receiver, dispatcher, answer, retried):
    r = await receiver(default=answer)
    endpoint = await register(merchant, r.url, ["order.created"])
    d = await dispatcher()
    await quick(merchant)
    await pump(d, lambda: len(r.requests) == 1)
    row = await delivery_row(stack, endpoint["id"])
    assert row["status"] == ("pending" if retried else "failed")
    assert (row["next_attempt_at"] is not None) == retried


async def test_redeliver_one_event_and_every_failure_since(stack, merchant, receiver, dispatcher):
    r = await receiver(default=400)
    endpoint = await register(merchant, r.url, ["order.created"])
    d = await dispatcher()
    since = d.clock()
    await quick(merchant)
    await quick(merchant)
    await pump(d, lambda: len(r.requests) == 2)
    failed = await log_of(merchant, endpoint_id=endpoint["id"], status="failed")
    assert len(failed) == 2
    r.default = 200
    path = f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints/{endpoint['id']}/redeliver"
    status, again = await merchant.post(path, {"event_id": failed[0]["event_id"]})
    assert status == 202 and again["delivery_ids"] == [failed[0]["id"]]
    await pump(d, lambda: len(r.requests) == 3)
    assert json.loads(r.requests[2].body)["id"] == failed[0]["event_id"]
    status, again = await merchant.post(path, {"failed_since": since.isoformat()})
    assert status == 202 and again["delivery_ids"] == [failed[1]["id"]]
    await pump(d, lambda: len(r.requests) == 4)
    log = await log_of(merchant, endpoint_id=endpoint["id"])
    assert {x["status"] for x in log} == {"succeeded"}
    assert all([a["number"] for a in x["attempts"]] == [1, 2] for x in log)
    # A delivered event can be asked for again too: at least once, the same event id.
    status, _ = await merchant.post(path, {"event_id": failed[0]["event_id"]})
    await pump(d, lambda: len(r.requests) == 5)
    assert json.loads(r.requests[4].body)["id"] == failed[0]["event_id"]


async def test_delivery_log_filters_and_pages(stack, merchant, receiver, dispatcher):
    r = await receiver()
    endpoint = await register(merchant, r.url)
    d = await dispatcher()
    await quick(merchant)
    await pump(d, lambda: len(r.requests) == 2)  # order.created, checkout_session.created
    base = f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-deliveries"
    status, first = await merchant.get(f"{base}?webhook_endpoint_id={endpoint['webhook_endpoint_id']}&limit=1")
    assert status == 200 and first["has_more"] and len(first["data"]) == 1
    status, second = await merchant.get(f"{base}?endpoint_id={endpoint['id']}&limit=1&cursor={first['next_cursor']}")
    assert status == 200 and not second["has_more"] and second["next_cursor"] is None
    both = first["data"] + second["data"]
    assert {x["event_type"] for x in both} == {"order.created", "checkout_session.created"}
    one = both[0]
    # The names before (`id`, `endpoint_id`) are answered beside the new ones, and filter still, for one version.
    assert one["id"] == one["delivery_id"]
    assert one["endpoint_id"] == one["webhook_endpoint_id"] == endpoint["webhook_endpoint_id"]
    status, by_old_name = await merchant.get(f"{base}?endpoint_id={endpoint['id']}")
    assert [x["delivery_id"] for x in by_old_name["data"]] == [x["delivery_id"] for x in both]
    status, by_event = await merchant.get(f"{base}?event_id={one['event_id']}")
    assert [x["delivery_id"] for x in by_event["data"]] == [one["delivery_id"]]
    status, read = await merchant.get(f"{base}/{one['id']}")
    assert status == 200 and read == one
    other = await stack.merchant("Other")
    status, body = await other.get(f"/b2b/v1/merchants/{other.merchant_id}/webhook-deliveries/{one['id']}")
    assert (status, body["error"]["code"]) == (404, "webhook_delivery_not_found")
    for query, code in (("status=lost", "invalid_status"), ("limit=0", "invalid_limit"), ("color=red", "unknown_parameter"),
                        ("cursor=zz", "invalid_cursor")):
        status, body = await merchant.get(f"{base}?{query}")
        assert (status, body["error"]["code"]) == (422, code), query
