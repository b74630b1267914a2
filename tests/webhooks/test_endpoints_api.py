"""Endpoint registration through signed calls: CRUD, every refusal with its status and code,
modes kept apart, Idempotency-Key as docs/api.md says."""

from __future__ import annotations

import asyncio

import pytest

from tests.integration.helpers import quick

BASE = "/b2b/v1/merchants/{mid}/webhook-endpoints"
URL = "https://hooks.example.com/service"


def base(client) -> str:
    return BASE.format(mid=client.merchant_id)


async def count(stack, client) -> int:
    return await stack.pool.fetchval("SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1", client.merchant_id)


async def test_create_read_change_delete(stack, merchant):
    status, created = await merchant.post(base(merchant), {"url": URL, "enabled_events": ["payment.settled",
                                                                                          "payment.settled"],
                                                           "description": "fulfilment"})
    assert status == 201, created
    assert created["secret"].startswith("whsec_") and created["webhook_endpoint_id"].startswith("we_")
    assert created["id"] == created["webhook_endpoint_id"]  # its name before, answered for one version
    assert (created["url"], created["enabled_events"], created["status"], created["livemode"]) == (
        URL, ["payment.settled"], "enabled", False)
    path = f"{base(merchant)}/{created['webhook_endpoint_id']}"
    status, read = await merchant.get(path)
    assert status == 200 and "secret" not in read
    assert read == {k: v for k, v in created.items() if k != "secret"}
    status, listing = await merchant.get(base(merchant))
    assert [e["webhook_endpoint_id"] for e in listing["data"]] == [created["webhook_endpoint_id"]]
    status, changed = await merchant.patch(path, {"enabled_events": ["*"], "status": "disabled"})
    assert status == 200 and changed["enabled_events"] == ["*"]
    assert (changed["status"], changed["disabled_reason"]) == ("disabled", "merchant")
    status, changed = await merchant.patch(path, {"status": "enabled", "url": URL + "/v2"})
    assert (changed["status"], changed["disabled_reason"], changed["url"]) == ("enabled", None, URL + "/v2")
    status, deleted = await merchant.call("DELETE", path)
    assert status == 200 and deleted == {"object": "webhook_endpoint", "webhook_endpoint_id": created["id"],
                                         "id": created["id"], "deleted": True}
    status, body = await merchant.get(path)
    assert (status, body["error"]["code"], body["error"]["param"]) == (404, "webhook_endpoint_not_found",
                                                                       "webhook_endpoint_id")
    status, listing = await merchant.get(base(merchant))
    assert listing["data"] == []


async def test_modes_are_kept_apart(stack, merchant):
    live = await stack.other_mode(merchant, livemode=True)
    status, created = await live.post(base(live), {"url": URL})
    assert status == 201 and created["livemode"] is True
    status, listing = await merchant.get(base(merchant))
    assert listing["data"] == []
    status, body = await merchant.get(f"{base(merchant)}/{created['id']}")
    assert (status, body["error"]["code"]) == (404, "webhook_endpoint_not_found")
    status, body = await live.post(base(live), {"url": "http://127.0.0.1:9/hook"})
    assert (status, body["error"]["code"]) == (422, "url_https_required")
    status, body = await merchant.post(base(merchant), {"url": "http://127.0.0.1:9/hook"})
    assert status == 201  # test mode may deliver to a developer's own machine


# (name, live key, body, status, code, param)
REFUSALS = [
    ("missing-url", False, {}, 422, "missing_field", "url"),
    ("unknown-field", False, {"url": URL, "color": "red"}, 422, "unknown_field", "color"),
    ("not-http", False, {"url": "ftp://example.com/x"}, 422, "invalid_field", "url"),
    ("credentials", False, {"url": "https://user:pw@example.com/x"}, 422, "invalid_url", "url"),
    ("star-and-more", False, {"url": URL, "enabled_events": ["*", "order.created"]}, 422, "invalid_enabled_events",
     "enabled_events"),
    ("malformed-type", False, {"url": URL, "enabled_events": ["Order Created"]}, 422, "invalid_field",
     "enabled_events[0]"),
    ("no-types", False, {"url": URL, "enabled_events": []}, 422, "invalid_field", "enabled_events"),
    ("long-description", False, {"url": URL, "description": "x" * 501}, 422, "invalid_field", "description"),
    ("live-http", True, {"url": "http://hooks.example.com/x"}, 422, "url_https_required", "url"),
    ("live-loopback", True, {"url": "https://127.0.0.1/x"}, 422, "url_not_public", "url"),
    ("live-localhost", True, {"url": "https://localhost:8443/x"}, 422, "url_not_public", "url"),
    ("live-private", True, {"url": "https://10.1.2.3/x"}, 422, "url_not_public", "url"),
    ("live-link-local", True, {"url": "https://169.254.169.254/latest"}, 422, "url_not_public", "url"),
    ("live-ipv6-loopback", True, {"url": "https://[::1]/x"}, 422, "url_not_public", "url"),
    ("live-mapped-private", True, {"url": "https://[::ffff:192.168.1.1]/x"}, 422, "url_not_public", "url"),
    ("live-internal-name", True, {"url": "https://billing.internal/x"}, 422, "url_not_public", "url"),
]


@pytest.mark.parametrize("live,payload,status,code,param", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
async def test_registration_refused_writes_nothing(stack, merchant, live, payload, status, code, param):
    client = await stack.other_mode(merchant, livemode=True) if live else merchant
    got, body = await client.post(base(client), payload)
    assert (got, body["error"]["code"], body["error"].get("param")) == (status, code, param), body
    assert await count(stack, merchant) == 0


async def test_call_refusals(stack, merchant):
    other = await stack.merchant("Other")
    _, endpoint = await merchant.post(base(merchant), {"url": URL})
    path = f"{base(merchant)}/{endpoint['id']}"
    cases = [
        (other.post(base(merchant), {"url": URL}), 403, "merchant_mismatch", "merchant_id"),
        (other.get(path), 403, "merchant_mismatch", "merchant_id"),
        (other.get(f"{base(other)}/{endpoint['id']}"), 404, "webhook_endpoint_not_found", "webhook_endpoint_id"),
        (other.patch(f"{base(other)}/{endpoint['id']}", {"url": URL}), 404, "webhook_endpoint_not_found",
         "webhook_endpoint_id"),
        (other.call("DELETE", f"{base(other)}/{endpoint['id']}"), 404, "webhook_endpoint_not_found", "webhook_endpoint_id"),
        (merchant.patch(path, {"status": "paused"}), 422, "invalid_field", "status"),
        (merchant.patch(path, {"url": "https://a:b@example.com"}), 422, "invalid_url", "url"),
        (merchant.post(f"{path}/roll-secret", {"overlap_seconds": -1}), 422, "invalid_field", "overlap_seconds"),
        (merchant.post(f"{path}/roll-secret", {"overlap_seconds": 604801}), 422, "invalid_field", "overlap_seconds"),
        (merchant.post(base(merchant), raw=b"{not json"), 400, "invalid_json", None),
        (merchant.post(f"{path}/redeliver", {}), 422, "event_id_or_failed_since", "event_id"),
        (merchant.post(f"{path}/redeliver", {"event_id": "evt_x", "failed_since": "2026-01-01T00:00:00Z"}), 422,
         "event_id_or_failed_since", "event_id"),
        (merchant.post(f"{path}/redeliver", {"failed_since": "2026-01-01T00:00:00"}), 422, "invalid_field",
         "failed_since"),
        (merchant.post(f"{path}/redeliver", {"event_id": "evt_nope"}), 404, "event_not_found", "event_id"),
        (merchant.post(base(merchant), {"url": URL}, headers={"Idempotency-Key": "k" * 256}), 400,
         "invalid_idempotency_key", "Idempotency-Key"),
    ]
    for call, status, code, param in cases:
        got, body = await call
        assert (got, body["error"]["code"], body["error"].get("param")) == (status, code, param), body
    # Another merchant's event cannot be redelivered to this endpoint.
    theirs = (await quick(other))["order_id"]
    event_id = await stack.pool.fetchval("SELECT event_id FROM events WHERE order_id = $1 AND seq = 1", theirs)
    got, body = await merchant.post(f"{path}/redeliver", {"event_id": event_id})
    assert (got, body["error"]["code"]) == (404, "event_not_found")
    await merchant.patch(path, {"status": "disabled"})
    got, body = await merchant.post(f"{path}/redeliver", {"failed_since": "2026-01-01T00:00:00Z"})
    assert (got, body["error"]["code"], body["error"]["param"]) == (409, "webhook_endpoint_disabled", "webhook_endpoint_id")
    assert await count(stack, merchant) == 1


async def test_at_most_sixteen_endpoints_per_mode_even_when_racing(stack, merchant):
    answers = await asyncio.gather(*[merchant.post(base(merchant), {"url": f"{URL}/{n}"}) for n in range(20)])
    assert sorted(status for status, _ in answers) == [201] * 16 + [409] * 4
    assert {body["error"]["code"] for status, body in answers if status == 409} == {"too_many_endpoints"}
    assert await count(stack, merchant) == 16
    live = await stack.other_mode(merchant, livemode=True)
    assert (await live.post(base(live), {"url": URL}))[0] == 201  # the other mode has its own sixteen


async def test_idempotency_key_answers_the_first_response(stack, merchant):
    key = {"Idempotency-Key": "create-endpoint-1"}
    answers = await asyncio.gather(*[merchant.post(base(merchant), {"url": URL}, headers=key) for _ in range(5)])
    assert {status for status, _ in answers} == {201}
    assert len({(body["id"], body["secret"]) for _, body in answers}) == 1
    assert await count(stack, merchant) == 1
    status, body = await merchant.post(base(merchant), {"url": URL + "/other"}, headers=key)
    assert (status, body["error"]["code"], body["error"]["param"]) == (409, "idempotency_key_reused", "Idempotency-Key")
    async with stack.http.post(merchant.base_url + base(merchant), data=b'{"url": "%s"}' % URL.encode(),
                               headers=await merchant.fresh_headers("POST", base(merchant), b'{"url": "%s"}' % URL.encode())
                               | key) as resp:
        assert resp.status == 201 and resp.headers["Idempotent-Replayed"] == "true"
    # The same key in the other mode is another key.
    live = await stack.other_mode(merchant, livemode=True)
    status, other = await live.post(base(live), {"url": URL}, headers=key)
    assert status == 201 and other["id"] != answers[0][1]["id"]


async def test_idempotency_key_of_a_refused_body_can_be_used_again(stack, merchant):
    key = {"Idempotency-Key": "fix-and-retry"}
    status, _ = await merchant.post(base(merchant), {"url": "ftp://nope"}, headers=key)
    assert status == 422
    status, created = await merchant.post(base(merchant), {"url": URL}, headers=key)
    assert status == 201


async def test_idempotency_key_on_patch_and_a_recorded_refusal(stack, merchant):
    _, endpoint = await merchant.post(base(merchant), {"url": URL})
    path = f"{base(merchant)}/{endpoint['id']}"
    key = {"Idempotency-Key": "patch-1"}
    first = await merchant.patch(path, {"description": "one"}, headers=key)
    await merchant.patch(path, {"description": "two"})
    again = await merchant.patch(path, {"description": "one"}, headers=key)
    assert first == again and again[1]["description"] == "one"
    status, read = await merchant.get(path)
    assert read["description"] == "two"  # the replay changed nothing
    for _ in range(15):
        await merchant.post(base(merchant), {"url": URL})
    refused = await merchant.post(base(merchant), {"url": URL}, headers={"Idempotency-Key": "17th"})
    assert refused[0] == 409
    await merchant.call("DELETE", path)
    status, again = await merchant.post(base(merchant), {"url": URL}, headers={"Idempotency-Key": "17th"})
    # The same recorded answer; only the request id, which names each HTTP request, differs.
    assert again["error"].pop("request_id") != refused[1]["error"].pop("request_id")
    assert (status, again) == refused


async def test_openapi_lists_the_webhook_routes(stack, merchant):
    async with stack.http.get(merchant.base_url + "/b2b/v1/openapi.json") as resp:
        paths = (await resp.json())["paths"]
    endpoint = paths["/b2b/v1/merchants/{merchant_id}/webhook-endpoints/{webhook_endpoint_id}"]
    assert set(endpoint) == {"get", "patch", "delete"}
    assert "requestBody" in endpoint["patch"] and "/b2b/v1/events" in paths
