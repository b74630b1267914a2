"""Test doubles for webhooks: a real local HTTP receiver, a controllable clock, and small drivers."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

from aiohttp import web

from webhooks.dispatcher import Dispatcher

HANG = "hang"


class Received:
    def __init__(self, headers: list[tuple[str, str]], body: bytes, path: str):
        self.header_list = headers
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body
        self.path = path
        self.at = time.monotonic()


class Receiver:
    """A merchant's endpoint: records every request exactly as it arrived and answers by script
    (a status per request in order, then `default`; HANG never answers), each after `delay_s`."""

    def __init__(self, script: list | None = None, default: int | str = 200, delay_s: float = 0.0):
        self.script = list(script or [])
        self.default = default
        self.delay_s = delay_s
        self.requests: list[Received] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> "Receiver":
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/hooks"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.raw_headers]
        self.requests.append(Received(headers, await request.read(), request.path))
        answer = self.script.pop(0) if self.script else self.default
        if answer == HANG:
            await asyncio.sleep(3600)
        await asyncio.sleep(self.delay_s)
        return web.Response(status=answer, text="received")

    async def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.requests


class Clock:
    """Starts at the real time and moves only when told to."""

    def __init__(self) -> None:
        self.now = datetime.now(timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def set(self, moment: datetime) -> None:
        self.now = max(self.now, moment)

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


async def pump(d: Dispatcher, until, timeout: float = 10.0) -> None:
    """Read the stream, sweep and finish every attempt until `until()` holds (events reach the stream
    right after the API answers, so a read may have to wait a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        await d.consume(block_ms=50)
        await d.sweep()
        await d.drain()
        if until() or time.monotonic() > deadline:
            return


async def register(client, url: str, events: list[str] | None = None, **extra) -> dict:
    payload = {"url": url, **({"enabled_events": events} if events else {}), **extra}
    status, body = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/webhook-endpoints", payload)
    assert status == 201, body
    return body
