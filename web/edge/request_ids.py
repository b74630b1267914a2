"""Request ids: every API answer carries `X-Request-Id`, the caller's own when it sent a well-formed one, else
a new one; an error body repeats it as `error.request_id`, so a merchant quoting either is found in the logs."""

from __future__ import annotations

import json
import logging
import re
import secrets
import time

from aiohttp import web

from common import logs

HEADER = "X-Request-Id"
_WELL_FORMED = re.compile(r"[A-Za-z0-9._:-]{1,128}")
REQUEST_ID: web.RequestKey[str] = web.RequestKey("request_id", str)
log = logging.getLogger(__name__)


def of(request: web.Request) -> str:
    if REQUEST_ID not in request:
        sent = request.headers.get(HEADER, "")
        request[REQUEST_ID] = sent if _WELL_FORMED.fullmatch(sent) else f"req_{secrets.token_hex(12)}"
    return request[REQUEST_ID]


@web.middleware
async def request_id_middleware(request: web.Request, handler):
    """The request's id on every line logged while it is served (the merchant's and command's ids join it as
    they become known), and one DEBUG line per request: at INFO a busy web process would write thousands."""
    token = logs.bind(request_id=of(request))
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s %d", request.method, _route(request), status,
                      extra={"status": status, "ms": round((time.perf_counter() - started) * 1000, 1)})
        logs.unbind(token)
    if (request.path.startswith("/b2b/") and response.status >= 400 and isinstance(response, web.Response)
            and response.content_type == "application/json" and response.body):
        body = json.loads(response.body)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            body["error"]["request_id"] = of(request)
            response.body = json.dumps(body).encode()
    return response


def _route(request: web.Request) -> str:
    """The route's pattern, not the path: paths of the hosted pages and the dashboard hold their bearer tokens."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else "(no route)"


async def add_header(request: web.Request, response: web.StreamResponse) -> None:
    """app.on_response_prepare: on every answer, errors and pages included."""
    response.headers[HEADER] = of(request)
