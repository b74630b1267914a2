"""Request count and latency per route pattern and status, and `/metrics` for Prometheus to scrape."""

from __future__ import annotations

import time

from aiohttp import web

from common import probes
from common.metrics import HTTP_DURATION, HTTP_REQUESTS

UNMATCHED = "unmatched"  # no route: the raw path would give every probe of a scanner its own series
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})  # any other token: OTHER

# (resource, method, status) -> the children of both metrics: .labels() hashes its arguments on every call.
_children: dict[tuple, tuple] = {}


@web.middleware
async def metrics_middleware(request: web.Request, handler):
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        resource = request.match_info.route.resource
        method = request.method if request.method in _METHODS else "OTHER"
        key = (resource, method, status)
        children = _children.get(key)
        if children is None:
            labels = (resource.canonical if resource is not None else UNMATCHED, method, str(status))
            children = _children[key] = (HTTP_REQUESTS.labels(*labels), HTTP_DURATION.labels(*labels))
        children[0].inc()
        children[1].observe(time.perf_counter() - started)


ROUTE_DEFS = [web.get("/metrics", probes.metrics)]
