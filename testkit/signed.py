"""An HTTP client that signs B2B requests exactly as the README tells merchants to."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp

from web.edge.signing import sign

MAX_AHEAD_S = 60


class Signed:
    def __init__(self, http: aiohttp.ClientSession, base_url: str, public_key: str, secret_key: str,
                 merchant_id: str = ""):
        self.http = http
        self.base_url = base_url
        self.public_key = public_key
        self.secret_key = secret_key
        self.merchant_id = merchant_id
        self._last_signed: dict[tuple[str, str, bytes], int] = {}

    def headers(self, method: str, path: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        return {
            "X-Client-ID": self.public_key,
            "X-Timestamp": ts,
            "X-Signature": sign(self.secret_key, method, path, ts, body),
            "Content-Type": "application/json",
        }

    async def _fresh_timestamp(self, method: str, path: str, body: bytes) -> int:
        """A timestamp this very request was never signed with: the service refuses a signature it has seen, so
        a poll, a retry or a burst of identical concurrent calls each sign a later second, up to a minute ahead
        (well inside the 300 s tolerance) before waiting for the clock."""
        request = (method, path, body)
        ts = max(int(time.time()), self._last_signed.get(request, 0) + 1)
        self._last_signed[request] = ts
        ahead = ts - time.time() - MAX_AHEAD_S
        if ahead > 0:
            await asyncio.sleep(ahead)
        return ts

    async def fresh_headers(self, method: str, path: str, body: bytes) -> dict[str, str]:
        return self.headers(method, path, body, await self._fresh_timestamp(method, path, body))

    async def call(self, method: str, path: str, payload: Any = None, *, raw: bytes | None = None,
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:
        body = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        all_headers = await self.fresh_headers(method, path, body) | (headers or {})
        async with self.http.request(method, self.base_url + path, data=body, headers=all_headers) as resp:
            text = await resp.text()
            return resp.status, (json.loads(text) if text else None)

    async def get(self, path: str, **kw):
        return await self.call("GET", path, **kw)

    async def post(self, path: str, payload: Any = None, **kw):
        return await self.call("POST", path, payload, **kw)

    async def patch(self, path: str, payload: Any = None, **kw):
        return await self.call("PATCH", path, payload, **kw)
