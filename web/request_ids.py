"""Request ids: every API answer carries `X-Request-Id`, the caller's own when it sent a well-formed one, else
a new one; an error body repeats it as `error.request_id`, so a merchant quoting either is found in the logs."""

from __future__ import annotations

import json
import re
import secrets

from aiohttp import web

HEADER = "X-Request-Id"
_WELL_FORMED = re.compile(r"[A-Za-z0-9._:-]{1,128}")
REQUEST_ID: web.RequestKey[str] = web.RequestKey("request_id", str)


def of(request: web.Request) -> str:
    if REQUEST_ID not in request:
        sent = request.headers.get(HEADER, "")
        request[REQUEST_ID] = sent if _WELL_FORMED.fullmatch(sent) else f"req_{secrets.token_hex(12)}"
    return request[REQUEST_ID]


@web.middleware
async def request_id_middleware(request: web.Request, handler):
    response = await handler(request)
    if (request.path.startswith("/b2b/") and response.status >= 400 and isinstance(response, web.Response)
            and response.content_type == "application/json" and response.body):
        body = json.loads(response.body)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            body["error"]["request_id"] = of(request)
            response.body = json.dumps(body).encode()
    return response


async def add_header(request: web.Request, response: web.StreamResponse) -> None:
    """app.on_response_prepare: on every answer, errors and pages included."""
    response.headers[HEADER] = of(request)
