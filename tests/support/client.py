"""An HTTP client that signs B2B requests exactly as the README tells merchants to."""

from __future__ import annotations

import json
import time
from typing import Any

import aiohttp

from web.signing import sign


class Signed:
    def __init__(self, http: aiohttp.ClientSession, base_url: str, public_key: str, secret_key: str,
                 merchant_id: str = ""):
        self.http = http
        self.base_url = base_url
        self.public_key = public_key
        self.secret_key = secret_key
        self.merchant_id = merchant_id

    def headers(self, method: str, path: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        return {
            "X-Client-ID": self.public_key,
            "X-Timestamp": ts,
            "X-Signature": sign(self.secret_key, method, path, ts, body),
            "Content-Type": "application/json",
        }

    async def call(self, method: str, path: str, payload: Any = None, *, raw: bytes | None = None,
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:
        body = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        all_headers = self.headers(method, path, body) | (headers or {})
        async with self.http.request(method, self.base_url + path, data=body, headers=all_headers) as resp:
            text = await resp.text()
            return resp.status, (json.loads(text) if text else None)

    async def get(self, path: str, **kw):
        return await self.call("GET", path, **kw)

    async def post(self, path: str, payload: Any = None, **kw):
        return await self.call("POST", path, payload, **kw)

    async def patch(self, path: str, payload: Any = None, **kw):
        return await self.call("PATCH", path, payload, **kw)
