"""Repeated signatures (docs/api.md, Replays): reads repeat, keyed writes get their recorded answer, others are refused."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.integration.test_auth import _headers, _raw

QUICK = "/b2b/v1/checkout-sessions/quick"


@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_a_read_may_repeat_its_signature(stack, merchant, method):
    created = (await merchant.post(QUICK, {"amount": "2.00"}))[1]
    path = f"/b2b/v1/orders/{created['order_id']}"
    headers = _headers(merchant, method=method, path=path)
    for _ in range(3):  # the very same bytes, within one second
        async with stack.http.request(method, stack.base_url + path, headers=headers) as resp:
            assert resp.status == 200
            if method == "GET":
                assert (await resp.json())["order_id"] == created["order_id"]


async def test_a_read_still_meets_the_timestamp_window(stack, merchant):
    headers = _headers(merchant, path="/b2b/v1/orders", ts=int(__import__("time").time()) - 301)
    status, answer = await _raw(stack, "GET", "/b2b/v1/orders", headers)
    assert (status, answer["error"]["code"]) == (401, "timestamp_out_of_tolerance")


def _keyed(merchant, path, body, key):
    return _headers(merchant, method="POST", path=path, body=body) | {"Idempotency-Key": key,
                                                                      "Content-Type": "application/json"}


async def test_a_keyed_order_write_repeated_with_its_signature_gets_the_first_answer(stack, merchant):
    body = b'{"amount": "7.00", "external_ref": "retry-same-signature"}'
    headers = _keyed(merchant, QUICK, body, "retry-1")
    first_status, first = await _raw(stack, "POST", QUICK, headers, body)
    assert first_status == 201, first
    again_status, again = await _raw(stack, "POST", QUICK, headers, body)  # a client library's retry, same bytes
    assert (again_status, again["order_id"], again["session_key"]) == (201, first["order_id"], first["session_key"])
    listed = (await merchant.get("/b2b/v1/orders"))[1]
    assert [o["order_id"] for o in listed["data"]] == [first["order_id"]]


async def test_keyed_identical_writes_at_once_apply_once_and_answer_alike(stack, merchant):
    body = b'{"amount": "8.00"}'
    headers = _keyed(merchant, QUICK, body, "at-once-1")
    answers = await asyncio.gather(*(_raw(stack, "POST", QUICK, headers, body) for _ in range(5)))
    assert {status for status, _ in answers} == {201}
    assert len({a["order_id"] for _, a in answers}) == 1
    assert len((await merchant.get("/b2b/v1/orders"))[1]["data"]) == 1


async def test_a_keyed_non_order_write_repeated_with_its_signature_gets_the_first_answer(stack, merchant):
    path = f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints"
    body = json.dumps({"url": "https://example.com/hooks"}).encode()
    headers = _keyed(merchant, path, body, "endpoint-1")
    first_status, first = await _raw(stack, "POST", path, headers, body)
    assert first_status == 201, first
    again_status, again = await _raw(stack, "POST", path, headers, body)
    assert (again_status, again) == (201, first)
    listed = (await merchant.get(path))[1]
    assert len(listed["data"]) == 1


async def test_a_repeat_whose_key_has_no_recorded_answer_is_refused(stack, merchant, redis, keys):
    """The signature was spent (by a first attempt that recorded nothing): the key cannot vouch for the repeat."""
    path = f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints"
    body = json.dumps({"url": "https://example.com/spent"}).encode()
    headers = _keyed(merchant, path, body, "endpoint-unrecorded")
    await redis.set(keys.signature_seen(headers["X-Signature"]), 1, ex=60)
    status, answer = await _raw(stack, "POST", path, headers, body)
    assert (status, answer["error"]["code"]) == (401, "signature_replayed")
    assert (await merchant.get(path))[1]["data"] == []
    # The key was not used up: a fresh signature with it is served.
    status, created = await _raw(stack, "POST", path, _keyed(merchant, path, body, "endpoint-unrecorded") |
                                 {"X-Timestamp": str(int(headers["X-Timestamp"]) + 1)} |
                                 {"X-Signature": _headers(merchant, "POST", path, body,
                                                          ts=int(headers["X-Timestamp"]) + 1)["X-Signature"]}, body)
    assert status == 201, created


async def test_an_order_write_whose_key_has_no_recorded_answer_is_refused(stack, merchant, redis, keys):
    body = b'{"amount": "9.00"}'
    headers = _keyed(merchant, QUICK, body, "order-unrecorded")
    for partition in range(keys.partitions):  # wherever the key's order lives
        await redis.set(keys.signature_seen(headers["X-Signature"], partition), 1, ex=60)
    status, answer = await _raw(stack, "POST", QUICK, headers, body)
    assert (status, answer["error"]["code"]) == (401, "signature_replayed")
    assert (await merchant.get("/b2b/v1/orders"))[1]["data"] == []


async def test_a_write_without_a_key_is_refused_when_repeated(stack, merchant):
    body = b'{"amount": "1.50"}'
    headers = _headers(merchant, method="POST", path=QUICK, body=body)
    assert (await _raw(stack, "POST", QUICK, headers, body))[0] == 201
    status, answer = await _raw(stack, "POST", QUICK, headers, body)
    assert (status, answer["error"]["code"]) == (401, "signature_replayed")


async def test_a_keyed_settings_change_repeated_with_its_signature_gets_the_first_answer(stack, merchant):
    merchant = await stack.other_mode(merchant, livemode=True)  # auto-approval is both modes': the live key's
    path = f"/b2b/v1/merchants/{merchant.merchant_id}/settings"
    body = b'{"auto_approve_customer_refunds": true}'
    headers = _headers(merchant, method="PATCH", path=path, body=body) | {"Idempotency-Key": "settings-1",
                                                                          "Content-Type": "application/json"}
    first = await _raw(stack, "PATCH", path, headers, body)
    assert first[0] == 200 and first[1]["auto_approve_customer_refunds"] is True
    assert await _raw(stack, "PATCH", path, headers, body) == first


async def test_a_repeated_delete_is_refused_even_with_a_key(stack, merchant):
    base = f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints"
    endpoint = (await merchant.post(base, {"url": "https://example.com/gone"}))[1]
    path = f"{base}/{endpoint['id']}"
    headers = _headers(merchant, method="DELETE", path=path) | {"Idempotency-Key": "delete-1"}
    assert (await _raw(stack, "DELETE", path, headers))[0] == 200
    status, answer = await _raw(stack, "DELETE", path, headers)
    assert (status, answer["error"]["code"]) == (401, "signature_replayed")
