"""LOG_FORMAT=json on the real processes: every line they write is a JSON object, a request's id follows it from the
web through the actors to the webhooks it causes, and no secret reaches any line."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from pathlib import Path

import aiohttp

from accounts import users
from tests.conftest import REDIS_URL
from tests.integration.helpers import QUICK, pay
from tests.integration.test_refunds_api import DEST
from tests.support.processes import deployment
from tests.webhooks.support import Receiver, register

PROCESSES = ("web", "actors", "webhooks")
FIELDS = {"time", "level", "logger", "message"}


def _lines(folder: Path) -> dict[str, list[str]]:
    """Every line each process wrote, stdout and stderr alike."""
    return {name: [line for kind in ("out", "err") if (folder / f"{name}.{kind}").exists()
                   for line in (folder / f"{name}.{kind}").read_text().splitlines()]
            for name in PROCESSES}


def _with(request_id: str, folder: Path) -> dict[str, list[dict]]:
    """Per process, the parsed lines that carry this request id."""
    return {name: [p for p in map(json.loads, lines) if p.get("request_id") == request_id]
            for name, lines in _lines(folder).items()}


async def _until_logged(folder: Path, request_id: str, timeout: float = 20) -> None:
    """Until every process has written a line with the request id (the webhooks one after its attempt is recorded)."""
    deadline = time.monotonic() + timeout
    while not all(_with(request_id, folder).values()):
        assert time.monotonic() < deadline, {name: len(found) for name, found in _with(request_id, folder).items()}
        await asyncio.sleep(0.2)


async def _dashboard_secrets(procs, pool, merchant_id: str, order_id: str) -> dict[str, str]:
    """A staff member signs in to the dashboard and opens the order: the password, the sign-in form's CSRF token and
    the session cookies it cost."""
    password = f"pw-{secrets.token_hex(8)}"
    await users.create(pool, merchant_id, f"staff+{merchant_id}@example.com", password)
    dashboard = f"{procs.base_url}/dashboard"
    jar = aiohttp.CookieJar(unsafe=True)  # keeps cookies of an IP host
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:
        async with browser.get(f"{dashboard}/signin") as page:
            csrf = re.search(r'name="csrf" value="([^"]+)"', await page.text()).group(1)
        form = {"csrf": csrf, "email": f"staff+{merchant_id}@example.com", "password": password}
        async with browser.post(f"{dashboard}/signin", data=form, allow_redirects=False) as signed_in:
            assert signed_in.status == 303, await signed_in.text()
        async with browser.get(f"{dashboard}/test/orders/{order_id}") as page:
            assert page.status == 200
    cookies = {f"cookie {c.key}": c.value for c in jar if len(c.value) >= 16}
    assert cookies
    return {"dashboard password": password, "CSRF token": csrf, **cookies}


async def test_json_lines_follow_a_request_to_its_webhooks_and_hold_no_secret(tmp_path):
    receiver = await Receiver().start()
    env = {"LOG_FORMAT": "json", "LOG_LEVEL": "DEBUG"}
    try:
        async with deployment(REDIS_URL, PROCESSES, env=env, output=tmp_path) as (procs, client, pool):
            signatures: list[str] = []
            sign = client.headers

            def signing(*args, **kw):
                headers = sign(*args, **kw)
                signatures.append(headers["X-Signature"])
                return headers

            client.headers = signing
            endpoint = await register(client, receiver.url)
            ids = {what: f"logs-{what}-{secrets.token_hex(4)}" for what in ("quick", "pay", "refund")}
            status, created = await client.post(QUICK, {"amount": "10.00"}, headers={"X-Request-Id": ids["quick"]})
            assert status == 201, created
            order_id = created["order_id"]
            status, _ = await pay(client, order_id, "10.00", headers={"X-Request-Id": ids["pay"]})
            assert status == 201
            status, refund = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds",
                                               {"order_id": order_id, "amount": "4.00", "reason": "damaged", **DEST},
                                               headers={"X-Request-Id": ids["refund"]})
            assert status == 201, refund
            page = await client.http.get(created["checkout_url"])  # a bearer token in its path
            assert page.status == 200
            page.release()
            for request_id in ids.values():
                await _until_logged(tmp_path, request_id)
            secrets_seen = {
                "merchant secret key": client.secret_key,
                "webhook signing secret": endpoint["secret"],
                "master key": procs.env["SERVICE_MASTER_KEY"],
                "checkout session key": created["session_key"],
                **await _dashboard_secrets(procs, pool, client.merchant_id, order_id),
            }
            secrets_seen |= {f"X-Signature {n}": s for n, s in enumerate(signatures)}
            secrets_seen |= {f"webhook signature {n}": part.removeprefix("sha256=")
                             for n, r in enumerate(receiver.requests)
                             for part in r.headers["x-service-signature"].split(",")}
            secrets_seen |= {f"standard webhook signature {n}": part.removeprefix("v1,")
                             for n, r in enumerate(receiver.requests)
                             for part in r.headers["webhook-signature"].split()}
            assert receiver.requests and len(signatures) == 4  # the endpoint, the session, the payment, the refund
    finally:
        await receiver.stop()

    lines = _lines(tmp_path)
    for name, written in lines.items():
        assert written, f"{name} wrote nothing"
        for line in written:
            parsed = json.loads(line)  # every line, start-up lines and other libraries' included
            assert isinstance(parsed, dict) and FIELDS <= parsed.keys(), line
            leaked = [what for what, secret in secrets_seen.items() if secret in line]
            assert not leaked, (name, leaked, line)

    found = _with(ids["quick"], tmp_path)
    [answered] = [p for p in found["web"] if p["message"].startswith("POST /b2b/v1/checkout-sessions/quick")]
    assert (answered["status"], answered["merchant_id"], answered["order_id"]) == (201, client.merchant_id, order_id)
    assert answered["command_id"].startswith("cmd_")
    [applied] = found["actors"]
    assert (applied["command_id"], applied["order_id"], applied["merchant_id"], applied["kind"], applied["outcome"]) == (
        answered["command_id"], order_id, client.merchant_id, "create_order", "ok")
    delivered = {p["event_id"]: p for p in found["webhooks"]}
    assert len(delivered) == applied["events"]  # order.created and checkout_session.created, one attempt each
    for attempt in delivered.values():
        assert (attempt["order_id"], attempt["merchant_id"], attempt["endpoint_id"], attempt["outcome"],
                attempt["status_code"]) == (order_id, client.merchant_id, endpoint["id"], "succeeded", 200)
        assert attempt["delivery_id"].startswith("whd_") and attempt["level"] == "DEBUG"
    sent = {r.headers["x-service-event-id"] for r in receiver.requests}
    assert delivered.keys() <= sent
    for what, kind in (("pay", "confirm_payment"), ("refund", "create_refund")):
        found = _with(ids[what], tmp_path)
        assert [p["kind"] for p in found["actors"]] == [kind]
        # A line written before the request named its order (a library loaded on the way) carries no order id.
        assert {p.get("order_id", order_id) for name in PROCESSES for p in found[name]} == {order_id}, what
