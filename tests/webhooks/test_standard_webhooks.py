"""Real deliveries verified by the Standard Webhooks reference libraries (PyPI and npm), not by our code,
before, during and after a secret roll's overlap."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.integration.helpers import pay, quick
from tests.webhooks.support import pump, register

NODE_DIR = Path(__file__).resolve().parent / "node"
needs_node = pytest.mark.skipif(shutil.which("node") is None or not (NODE_DIR / "node_modules").is_dir(),
                                reason="node, or tests/webhooks/node's npm ci, is missing")


def python_verifies(got, secret: str) -> bool:
    try:
        Webhook(secret).verify(got.body, got.headers)
    except WebhookVerificationError:
        return False
    return True


def node_verify(got, secret: str) -> dict:
    payload = {"body": base64.b64encode(got.body).decode(), "headers": got.headers, "secret": secret}
    out = subprocess.run(["node", "verify.mjs"], cwd=NODE_DIR, input=json.dumps(payload), capture_output=True,
                         text=True, timeout=30, check=True)
    return json.loads(out.stdout)


def node_verifies(got, secret: str) -> bool:
    answer = node_verify(got, secret)
    assert answer["ok"] is False or answer["id"] == json.loads(got.body)["id"], answer
    return answer["ok"]


async def _roll(merchant, endpoint_id: str, overlap_seconds: int) -> dict:
    status, rolled = await merchant.post(
        f"/b2b/v1/merchants/{merchant.merchant_id}/webhook-endpoints/{endpoint_id}/roll-secret",
        {"overlap_seconds": overlap_seconds})
    assert status == 200, rolled
    return rolled


async def _delivered(merchant, receiver_, d, order_id: str) -> object:
    count = len(receiver_.requests)
    status, body = await pay(merchant, order_id, "1.00")
    assert status in (200, 201), body
    await pump(d, lambda: len(receiver_.requests) > count)
    return receiver_.requests[count]


@pytest.mark.parametrize("verifies", [python_verifies, pytest.param(node_verifies, marks=needs_node)],
                         ids=["pypi", "npm"])
async def test_deliveries_verify_with_the_standardwebhooks_library_across_a_roll(
        stack, merchant, receiver, dispatcher, verifies):
    r = await receiver()
    endpoint = await register(merchant, r.url, ["payment.received"])
    first_secret = endpoint["secret"]
    d = await dispatcher()
    order_id = (await quick(merchant))["order_id"]

    before = await _delivered(merchant, r, d, order_id)
    assert before.headers["webhook-id"] == json.loads(before.body)["id"]
    assert before.headers["webhook-timestamp"] == before.headers["x-service-timestamp"]
    assert verifies(before, first_secret)
    assert not verifies(before, "whsec_" + base64.b64encode(b"w" * 32).decode())

    rolled = await _roll(merchant, endpoint["id"], 3600)
    during = await _delivered(merchant, r, d, order_id)
    assert during.headers["webhook-signature"].count("v1,") == 2
    assert verifies(during, rolled["secret"]) and verifies(during, first_secret)

    # Rolling again without overlap ends both earlier secrets at once.
    last = await _roll(merchant, endpoint["id"], 0)
    after = await _delivered(merchant, r, d, order_id)
    assert after.headers["webhook-signature"].count("v1,") == 1
    assert verifies(after, last["secret"])
    assert not verifies(after, rolled["secret"]) and not verifies(after, first_secret)


@needs_node
async def test_a_tampered_body_or_an_old_timestamp_is_refused_by_both_libraries(stack, merchant, receiver, dispatcher):
    r = await receiver()
    endpoint = await register(merchant, r.url, ["payment.received"])
    d = await dispatcher()
    got = await _delivered(merchant, r, d, (await quick(merchant))["order_id"])
    tampered = type(got)(got.header_list, got.body.replace(b"1.00", b"9.00"), got.path)
    # A capture replayed ten minutes later, its signature made good for that time: refused for its age alone.
    old = datetime.fromtimestamp(int(got.headers["webhook-timestamp"]) - 600, timezone.utc)
    resigned = Webhook(endpoint["secret"]).sign(got.headers["webhook-id"], old, got.body.decode())
    replaced = {"webhook-timestamp": str(int(old.timestamp())), "webhook-signature": resigned}
    stale = type(got)([(k, replaced.get(k.lower(), v)) for k, v in got.header_list], got.body, got.path)
    for verifies in (python_verifies, node_verifies):
        assert verifies(got, endpoint["secret"])
        assert not verifies(tampered, endpoint["secret"])
        assert not verifies(stale, endpoint["secret"])
