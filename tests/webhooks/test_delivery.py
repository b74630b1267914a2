"""A real delivery to a local receiver: exact headers and body, verified by the documented examples."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from tests.integration.helpers import pay, quick
from tests.webhooks.support import Clock, pump, register

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
EXPECTED_HEADERS = {"host", "content-type", "content-length", "user-agent", "x-service-event-id",
                    "x-service-event-type", "x-service-timestamp", "x-service-signature",
                    "webhook-id", "webhook-timestamp", "webhook-signature"}


def doc_block(language: str, marker: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)
    return next(b for b in blocks if marker in b)


def python_verifier():
    scope: dict = {}
    exec(compile(doc_block("python", "def verify_webhook"), str(DOC), "exec"), scope)
    return scope["verify_webhook"], scope["InvalidWebhook"]


NODE_RUNNER = """
const { verifyWebhook } = require('./verify.js');
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
try {
  const event = verifyWebhook(Buffer.from(input.body, 'base64'), input.headers, input.secret,
                              300, input.now === undefined ? undefined : input.now);
  console.log(JSON.stringify({ ok: true, id: event.id }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: e.message }));
}
"""


def node_verify(tmp_path: Path, body: bytes, headers: dict, secret: str, now: float | None = None) -> dict:
    (tmp_path / "verify.js").write_text(doc_block("js", "function verifyWebhook"))
    (tmp_path / "runner.js").write_text(NODE_RUNNER)
    payload = {"body": base64.b64encode(body).decode(), "headers": headers, "secret": secret}
    if now is not None:
        payload["now"] = now
    out = subprocess.run(["node", "runner.js"], cwd=tmp_path, input=json.dumps(payload), capture_output=True,
                         text=True, timeout=30, check=True)
    return json.loads(out.stdout)


async def _one_delivery(stack, merchant, receiver, dispatcher, **order):
    r = await receiver()
    endpoint = await register(merchant, r.url, ["order.created"])
    d = await dispatcher()
    created = await quick(merchant, **order)
    await pump(d, lambda: len(r.requests) >= 1)
    return r, endpoint, created, d


async def test_exact_headers_and_body(stack, merchant, receiver, dispatcher):
    r, endpoint, created, d = await _one_delivery(stack, merchant, receiver, dispatcher,
                                                  external_ref="SECRET-REF-42", metadata={"sku": "A1"})
    [got] = r.requests
    assert set(got.headers) == EXPECTED_HEADERS, got.header_list
    assert len(got.header_list) == len(EXPECTED_HEADERS)  # no header sent twice
    assert got.headers["content-type"] == "application/json"
    assert got.headers["user-agent"] == "Service-Webhooks/1"
    assert got.path == "/hooks"
    event = json.loads(got.body)
    assert list(event) == ["id", "type", "created_at", "livemode", "data"]
    assert event["type"] == "order.created" and event["livemode"] is False
    assert got.headers["x-service-event-id"] == event["id"] and got.headers["x-service-event-type"] == "order.created"
    assert event["data"]["order_id"] == created["order_id"]
    assert event["data"]["amount"] == "10.00"
    assert b"external_ref" not in got.body and b"SECRET-REF-42" not in got.body
    # The body is byte for byte the envelope the events API answers for that id.
    async with stack.http.get(merchant.base_url + f"/b2b/v1/events/{event['id']}",
                              headers=await merchant.fresh_headers("GET", f"/b2b/v1/events/{event['id']}", b"")) as resp:
        assert resp.status == 200 and await resp.read() == got.body
    assert re.fullmatch(r"sha256=[0-9a-f]{64}", got.headers["x-service-signature"])


async def test_signature_verified_by_the_documented_python_example(stack, merchant, receiver, dispatcher):
    r, endpoint, created, _ = await _one_delivery(stack, merchant, receiver, dispatcher)
    verify, invalid = python_verifier()
    [got] = r.requests
    assert verify(got.body, got.headers, endpoint["secret"])["data"]["order_id"] == created["order_id"]
    with pytest.raises(invalid):
        verify(got.body.replace(b"10.00", b"99.00"), got.headers, endpoint["secret"])
    with pytest.raises(invalid):
        verify(got.body, got.headers, "whsec_wrong")
    with pytest.raises(invalid):
        verify(got.body, got.headers, endpoint["secret"], now=int(got.headers["x-service-timestamp"]) + 301)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_signature_verified_by_the_documented_node_example(stack, merchant, receiver, dispatcher, tmp_path):
    r, endpoint, created, _ = await _one_delivery(stack, merchant, receiver, dispatcher)
    [got] = r.requests
    event_id = json.loads(got.body)["id"]
    assert node_verify(tmp_path, got.body, got.headers, endpoint["secret"]) == {"ok": True, "id": event_id}
    tampered = node_verify(tmp_path, got.body + b" ", got.headers, endpoint["secret"])
    assert tampered == {"ok": False, "error": "no signature matches"}
    late = node_verify(tmp_path, got.body, got.headers, endpoint["secret"],
                       now=int(got.headers["x-service-timestamp"]) + 301)
    assert late == {"ok": False, "error": "timestamp outside the tolerance"}


async def test_rolled_secret_overlap_signs_with_both_until_it_ends(stack, merchant, receiver, dispatcher):
    clock = Clock()
    r = await receiver()
    endpoint = await register(merchant, r.url, ["payment.received"])
    status, rolled = await merchant.post(
        f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints/{endpoint['id']}/roll-secret",
        {"overlap_seconds": 3600})
    assert status == 200 and rolled["secret"] != endpoint["secret"] and rolled["previous_secret_expires_at"]
    d = await dispatcher(clock=clock)
    verify, invalid = python_verifier()
    order_id = (await quick(merchant))["order_id"]
    await pay(merchant, order_id, "1.00")
    await pump(d, lambda: len(r.requests) >= 1)
    first = r.requests[0]
    assert first.headers["x-service-signature"].count("sha256=") == 2
    now = clock().timestamp()
    for secret in (rolled["secret"], endpoint["secret"]):
        verify(first.body, first.headers, secret, now=now)
    # After the overlap only the new secret signs.
    clock.advance(timedelta(hours=2).total_seconds())
    await pay(merchant, order_id, "1.00")
    await pump(d, lambda: len(r.requests) >= 2)
    second = r.requests[1]
    assert second.headers["x-service-signature"].count("sha256=") == 1
    verify(second.body, second.headers, rolled["secret"], now=clock().timestamp())
    with pytest.raises(invalid):
        verify(second.body, second.headers, endpoint["secret"], now=clock().timestamp())
