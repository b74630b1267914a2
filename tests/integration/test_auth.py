"""docs/spec.md §5 signature scheme: each refusal its own case, and the README's example accepted."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest

from web.edge.signing import sign

PATH = "/b2b/v1/orders?limit=1"


def _readme_signer():
    """The merchant example from the README, executed as written."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    code = re.search(r"```python\n(# sign_request\.py.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    return namespace["signed_headers"]


async def _raw(stack, method, path, headers, body=b""):
    async with stack.http.request(method, stack.base_url + path, data=body, headers=headers) as resp:
        return resp.status, await resp.json()


def _headers(client, method="GET", path=PATH, body=b"", ts=None, secret=None):
    ts = str(int(time.time()) if ts is None else ts)
    return {
        "X-Client-ID": client.public_key,
        "X-Timestamp": ts,
        "X-Signature": sign(secret or client.secret_key, method, path, ts, body),
    }


CASES = [
    ("missing-client-id", lambda c: {k: v for k, v in _headers(c).items() if k != "X-Client-ID"}, 401, "missing_header", "X-Client-ID"),
    ("missing-timestamp", lambda c: {k: v for k, v in _headers(c).items() if k != "X-Timestamp"}, 401, "missing_header", "X-Timestamp"),
    ("missing-signature", lambda c: {k: v for k, v in _headers(c).items() if k != "X-Signature"}, 401, "missing_header", "X-Signature"),
    ("unknown-key", lambda c: _headers(c) | {"X-Client-ID": "pk_test_doesnotexist"}, 401, "unknown_client_id", "X-Client-ID"),
    ("malformed-key", lambda c: _headers(c) | {"X-Client-ID": "sk_test_abc"}, 401, "invalid_client_id", "X-Client-ID"),
    ("wrong-signature", lambda c: _headers(c, secret="sk_test_wrong"), 401, "invalid_signature", "X-Signature"),
    ("signature-over-other-path", lambda c: _headers(c, path="/b2b/v1/orders"), 401, "invalid_signature", "X-Signature"),
    ("uppercase-hex", lambda c: (h := _headers(c)) | {"X-Signature": h["X-Signature"].upper()}, 401, "invalid_signature", "X-Signature"),
    ("sha256-prefixed", lambda c: (h := _headers(c)) | {"X-Signature": "sha256=" + h["X-Signature"]}, 401, "signature_prefix_not_allowed", "X-Signature"),
    ("timestamp-too-old", lambda c: _headers(c, ts=int(time.time()) - 301), 401, "timestamp_out_of_tolerance", "X-Timestamp"),
    ("timestamp-too-new", lambda c: _headers(c, ts=int(time.time()) + 301), 401, "timestamp_out_of_tolerance", "X-Timestamp"),
    ("timestamp-ms-too-old", lambda c: _headers(c, ts=int(time.time() * 1000) - 301_000), 401, "timestamp_out_of_tolerance",
     "X-Timestamp"),
    ("timestamp-not-integer", lambda c: _headers(c) | {"X-Timestamp": "2026-01-01T00:00:00Z"}, 401, "invalid_timestamp", "X-Timestamp"),
]


@pytest.mark.parametrize("make,status,code,param", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_refused(stack, merchant, make, status, code, param):
    got_status, body = await _raw(stack, "GET", PATH, make(merchant))
    assert got_status == status
    assert body["error"]["code"] == code and body["error"]["param"] == param
    assert body["error"]["type"] == "authentication_error"


@pytest.mark.parametrize("method,path", [("POST", "/b2b/v1/orders"), ("PATCH", "/b2b/v1/orders/ord_x/cancel")])
async def test_replayed_signature_refused(stack, merchant, method, path):
    body = b'{"amount": "1.00"}' if method == "POST" else b""
    headers = _headers(merchant, method=method, path=path, body=body)
    first, _ = await _raw(stack, method, path, headers, body)
    assert first in (200, 201, 404)
    status, answer = await _raw(stack, method, path, headers, body)  # the very same bytes, at once
    assert (status, answer["error"]["code"], answer["error"]["param"]) == (401, "signature_replayed", "X-Signature")


async def test_replayed_create_writes_nothing(stack, merchant):
    body = b'{"amount": "3.00"}'
    headers = _headers(merchant, method="POST", path="/b2b/v1/orders", body=body)
    assert (await _raw(stack, "POST", "/b2b/v1/orders", headers, body))[0] == 201
    assert (await _raw(stack, "POST", "/b2b/v1/orders", headers, body))[0] == 401
    status, listed = await merchant.get("/b2b/v1/orders")
    assert status == 200 and len(listed["data"]) == 1


async def test_millisecond_timestamp_accepted(stack, merchant):
    status, _ = await _raw(stack, "GET", PATH, _headers(merchant, ts=int(time.time() * 1000)))
    assert status == 200


async def test_within_tolerance_accepted(stack, merchant):
    status, _ = await _raw(stack, "GET", PATH, _headers(merchant, ts=int(time.time()) - 290))
    assert status == 200


async def test_key_of_another_merchant_is_forbidden(stack, merchant):
    other = await stack.merchant("Other")
    status, body = await other.get(f"/b2b/v1/merchants/{merchant.merchant_id}")
    assert (status, body["error"]["code"], body["error"]["param"]) == (403, "merchant_mismatch", "merchant_id")
    status, body = await merchant.get(f"/b2b/v1/merchants/{merchant.merchant_id}")
    assert status == 200 and body["merchant_id"] == merchant.merchant_id


async def test_other_merchants_order_is_not_found(stack, merchant):
    other = await stack.merchant("Other")
    _, created = await merchant.post("/b2b/v1/checkout-sessions/quick", {"amount": "5.00"})
    status, body = await other.get(f"/b2b/v1/orders/{created['order_id']}")
    assert (status, body["error"]["code"]) == (404, "order_not_found")


@pytest.mark.parametrize("object_mode", ["test", "live"])
async def test_key_of_other_mode_does_not_see_object(stack, object_mode):
    test_client = await stack.merchant("Modes")
    live_client = await stack.other_mode(test_client, livemode=True)
    owner, stranger = (test_client, live_client) if object_mode == "test" else (live_client, test_client)
    _, created = await owner.post("/b2b/v1/orders", {"amount": "5.00"})
    status, body = await stranger.get(f"/b2b/v1/orders/{created['order_id']}")
    assert (status, body["error"]["code"]) == (404, "order_not_found")
    status, body = await stranger.patch(f"/b2b/v1/orders/{created['order_id']}/cancel")
    assert (status, body["error"]["code"]) == (404, "order_not_found")
    assert (await owner.get(f"/b2b/v1/orders/{created['order_id']}"))[0] == 200


async def test_readme_example_signs_a_request_that_passes(stack, merchant):
    signed_headers = _readme_signer()
    body = json.dumps({"amount": "12.00", "external_ref": "readme"}).encode()
    path = "/b2b/v1/checkout-sessions/quick"
    headers = signed_headers("POST", path, body, merchant.public_key, merchant.secret_key)
    async with stack.http.post(stack.base_url + path, data=body, headers=headers) as resp:
        assert resp.status == 201, await resp.text()
        assert (await resp.json())["order"]["amount"] == "12.00"


async def test_openapi_is_public(stack):
    async with stack.http.get(stack.base_url + "/b2b/v1/openapi.json") as resp:
        assert resp.status == 200
        assert (await resp.json())["openapi"] == "3.1.0"


QUICK_PATH = "/b2b/v1/checkout-sessions/quick"


async def test_identical_creations_at_once_make_one_order(stack, merchant):
    body = b'{"amount": "4.00"}'
    headers = _headers(merchant, method="POST", path=QUICK_PATH, body=body)
    answers = await asyncio.gather(*(_raw(stack, "POST", QUICK_PATH, headers, body) for _ in range(5)))
    assert sorted(status for status, _ in answers) == [201, 401, 401, 401, 401]
    assert {a["error"]["code"] for status, a in answers if status == 401} == {"signature_replayed"}
    status, listed = await merchant.get("/b2b/v1/orders")
    assert status == 200 and len(listed["data"]) == 1


async def test_a_request_refused_before_its_order_keeps_its_answer_when_sent_again(stack, merchant):
    # Such a request changed nothing and spent no signature (docs/api.md): the same bytes get the same refusal.
    body = b'{"amount": "-1.00"}'
    headers = _headers(merchant, method="POST", path=QUICK_PATH, body=body)
    for _ in range(2):
        status, answer = await _raw(stack, "POST", QUICK_PATH, headers, body)
        assert (status, answer["error"]["code"]) == (422, "invalid_amount")
