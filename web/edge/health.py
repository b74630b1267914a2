"""`/healthz` and `/readyz` of the web process (common/probes.py has the checks). A load balancer routes to a
process only while it is ready."""

from __future__ import annotations

from aiohttp import web

from common import probes
from web.edge.app_state import ctx


async def readyz(request: web.Request) -> web.Response:
    c = ctx(request)
    return await probes.readiness({"postgres": lambda: probes.postgres(c.pool),
                                   "redis": lambda: probes.redis(lambda: c.bus.pipeliner.call("PING")),
                                   "clock": probes.clock(c.offset)})


ROUTE_DEFS = [web.get("/healthz", probes.healthz), web.get("/readyz", readyz)]
