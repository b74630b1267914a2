"""The outbound request: live mode reaches only public addresses, redirects are not followed, and
only the first KiBs of an answer are read."""

from __future__ import annotations

import json

from aiohttp import web

from tests.integration.helpers import quick
from tests.webhooks.support import pump, register
from webhooks.sender import KEPT, Job, Sender


def job(url: str, livemode: bool) -> Job:
    return Job(delivery_id="whd_t", event_id="evt_t", event_type="order.created", endpoint_id="we_t",
               livemode=livemode, url=url, secrets=["whsec_dGVzdC1zZWNyZXQ="], payload=b'{"id":"evt_t"}', attempts=0,
               round_attempts=0, round_started_at=None)


async def _attempt(url: str, livemode: bool):
    sender = Sender(timeout_s=5)
    await sender.start()
    try:
        return await sender.attempt(job(url, livemode))
    finally:
        await sender.close()


async def test_live_mode_never_connects_to_a_private_address(receiver):
    r = await receiver()
    port = r.url.split(":")[2].split("/")[0]
    for url in (r.url, f"http://localhost:{port}/hooks", f"http://[::ffff:127.0.0.1]:{port}/hooks"):
        live = await _attempt(url, livemode=True)
        assert live.status_code is None and "not a public address" in live.error, (url, live.error)
    assert r.requests == []
    test = await _attempt(r.url, livemode=False)
    assert test.status_code == 200 and len(r.requests) == 1


async def test_a_name_that_later_resolves_to_loopback_is_still_refused(stack, merchant, receiver, dispatcher):
    """DNS rebinding: registered with a public name, the host now answers a private address."""
    r = await receiver()
    live = await stack.other_mode(merchant, livemode=True)
    endpoint = await register(live, "https://hooks.example.com/x", ["order.created"])
    port = r.url.split(":")[2].split("/")[0]
    await stack.pool.execute("UPDATE webhook_endpoints SET url = $2 WHERE endpoint_id = $1", endpoint["id"],
                             f"http://localhost:{port}/hooks")
    d = await dispatcher()
    await quick(live)
    await pump(d, lambda: False, timeout=1.0)
    assert r.requests == []
    error = await stack.pool.fetchval("SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d"
                                      " USING (delivery_id) WHERE d.endpoint_id = $1", endpoint["id"])
    assert "not a public address" in error


async def test_redirects_are_not_followed_and_answers_are_cut(receiver):
    target = await receiver()
    app = web.Application()

    async def redirect(request):
        raise web.HTTPFound(target.url)

    async def huge(request):
        return web.Response(body=b"x" * 1_000_000)

    app.router.add_post("/redirect", redirect)
    app.router.add_post("/huge", huge)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    try:
        moved = await _attempt(base + "/redirect", livemode=False)
        assert moved.status_code == 302 and not moved.succeeded and target.requests == []
        big = await _attempt(base + "/huge", livemode=False)
        assert big.succeeded and big.response_body == "x" * KEPT
    finally:
        await runner.cleanup()


async def test_request_headers_are_logged_as_sent(stack, merchant, receiver, dispatcher):
    r = await receiver()
    endpoint = await register(merchant, r.url, ["order.created"])
    d = await dispatcher()
    await quick(merchant)
    await pump(d, lambda: len(r.requests) == 1)
    logged = await stack.pool.fetchval("SELECT a.request_headers FROM webhook_attempts a JOIN webhook_deliveries d"
                                       " USING (delivery_id) WHERE d.endpoint_id = $1", endpoint["id"])
    sent = r.requests[0].headers
    for name, value in json.loads(logged).items():
        assert sent[name.lower()] == value
