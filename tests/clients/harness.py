"""What the conformance runners run against: a real deployment behind a proxy that can drop an answer, a webhook
receiver, and merchants made for each runner (one of them rate-limited to 1 request per second, and the default one
with a live key too)."""

from __future__ import annotations

import base64
import contextlib
import json
from pathlib import Path

import aiohttp
from aiohttp import web

from accounts import merchants
from common.secrets import Vault
from tests.conftest import REDIS_URL
from tests.support.processes import deployment

CASES = Path(__file__).resolve().parents[2] / "clients" / "conformance" / "cases.json"
CONTROL = "/__harness__"
_HOP = {"host", "content-length", "transfer-encoding", "connection", "content-encoding", "keep-alive"}


class Harness:
    """A proxy in front of the service; `POST /__harness__/faults {"drop_responses": n}` makes it forward the next
    n requests and then close their connections instead of answering (the service did the work, the client never
    heard). It also receives webhooks at /__harness__/hooks and lists them at /__harness__/deliveries."""

    def __init__(self, upstream: str, http: aiohttp.ClientSession):
        self.upstream, self.http = upstream, http
        self.drop_responses = 0
        self.deliveries: list[dict] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> Harness:
        app = web.Application(client_max_size=2 * 1024 * 1024)
        app.router.add_post(CONTROL + "/faults", self._faults)
        app.router.add_post(CONTROL + "/hooks", self._hook)
        app.router.add_get(CONTROL + "/deliveries", self._deliveries)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _faults(self, request: web.Request) -> web.Response:
        self.drop_responses = int((await request.json()).get("drop_responses", 0))
        return web.json_response({"drop_responses": self.drop_responses})

    async def _hook(self, request: web.Request) -> web.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.deliveries.append({"body": base64.b64encode(await request.read()).decode(), "headers": headers})
        return web.Response(text="received")

    async def _deliveries(self, request: web.Request) -> web.Response:
        return web.json_response(self.deliveries)

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        async with self.http.request(request.method, self.upstream + request.path_qs, headers=headers,
                                     data=await request.read(), allow_redirects=False) as upstream:
            answer_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
            if self.drop_responses > 0:
                await upstream.read()
                self.drop_responses -= 1
                request.transport.close()  # the answer is lost on the way back
                return web.Response(status=upstream.status)
            # Passed on as it comes, so that an export reaches the client in chunks, as from the service itself.
            answer = web.StreamResponse(status=upstream.status, headers=answer_headers)
            await answer.prepare(request)
            async for chunk in upstream.content.iter_any():
                await answer.write(chunk)
            await answer.write_eof()
            return answer

    async def runner_env(self, pool, vault: Vault, name: str) -> dict:
        """Everything a runner needs, with merchants of its own so that runners never see each other's orders."""
        made = {}
        for role in ("default", "limited"):
            pair = await merchants.create(pool, vault, f"{name} {role}")
            made[role] = {"public_key": pair.public_key, "secret_key": pair.secret_key,
                          "merchant_id": pair.merchant_id}
        await merchants.set_rate_limit(pool, made["limited"]["merchant_id"], 1, 1, False)
        live = await merchants.add_key(pool, vault, made["default"]["merchant_id"], True)  # the team's cases
        made["live"] = {"public_key": live.public_key, "secret_key": live.secret_key, "merchant_id": live.merchant_id}
        return {"base_url": self.url, "control_url": self.url + CONTROL, "receiver_url": self.url + CONTROL + "/hooks",
                "merchants": made, "cases": str(CASES)}


@contextlib.asynccontextmanager
async def started():
    async with deployment(REDIS_URL, ("web", "actors", "webhooks")) as (procs, _client, pool), \
            aiohttp.ClientSession(auto_decompress=False) as http:
        harness = await Harness(procs.base_url, http).start()
        try:
            yield harness, pool, Vault(procs.env["SERVICE_MASTER_KEY"].encode())
        finally:
            await harness.stop()


def load_cases() -> list[dict]:
    return json.loads(CASES.read_text())["cases"]
