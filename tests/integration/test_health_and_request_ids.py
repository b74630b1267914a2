"""Probes for load balancers, and the request id a merchant can quote."""

from __future__ import annotations

import aiohttp
import msgspec
from aiohttp.test_utils import TestServer

from web.app import init_app


async def test_healthz_and_readyz_answer_when_all_is_up(stack):
    async with stack.http.get(stack.base_url + "/healthz") as resp:
        assert resp.status == 200 and await resp.json() == {"status": "ok"}
    async with stack.http.get(stack.base_url + "/readyz") as resp:
        assert resp.status == 200
        assert await resp.json() == {"status": "ready", "checks": {"postgres": "ok", "redis": "ok", "clock": "ok"}}


async def test_readyz_says_which_dependency_is_missing(settings):
    server = TestServer(init_app(msgspec.structs.replace(settings, redis_url="redis://127.0.0.1:1/0")))
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http, http.get(str(server.make_url("/readyz"))) as resp:
            body = await resp.json()
        assert resp.status == 503 and body["status"] == "not_ready"
        assert body["checks"]["postgres"] == "ok" and body["checks"]["redis"].startswith("unreachable")
    finally:
        await server.close()


async def test_every_answer_carries_a_request_id(merchant):
    async with merchant.http.get(merchant.base_url + "/b2b/v1/orders/ord_missing") as resp:  # unsigned: 401
        body = await resp.json()
        assert resp.status == 401
        assert resp.headers["X-Request-Id"].startswith("req_") and body["error"]["request_id"] == resp.headers["X-Request-Id"]

    status, body = await merchant.get("/b2b/v1/orders/ord_missing", headers={"X-Request-Id": "merchant-trace-42"})
    assert status == 404 and body["error"]["request_id"] == "merchant-trace-42"

    headers = await merchant.fresh_headers("POST", "/b2b/v1/checkout-sessions/quick", b'{"amount": "3.00"}')
    async with merchant.http.post(merchant.base_url + "/b2b/v1/checkout-sessions/quick", data=b'{"amount": "3.00"}',
                                  headers=headers | {"X-Request-Id": "not well formed!"}) as resp:
        assert resp.status == 201
        assert resp.headers["X-Request-Id"].startswith("req_")  # a malformed one is replaced, never echoed
