"""`/healthz`: the process answers. `/readyz`: it can serve: PostgreSQL and Redis reachable, every
migration of this release applied. A load balancer routes to a process only while it is ready."""

from __future__ import annotations

import asyncio

from aiohttp import web

from common import db
from web.context import ctx

CHECK_TIMEOUT_S = 2.0


async def healthz(_request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    c = ctx(request)
    checks: dict[str, str] = {}
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S), c.pool.acquire() as conn:
            missing = await db.missing_migrations(conn)
        checks["postgres"] = "ok" if not missing else "migrations missing: " + ", ".join(missing)
    except Exception as exc:  # any failure is the answer itself
        checks["postgres"] = f"unreachable: {type(exc).__name__}"
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S):
            await c.bus.pipeliner.call("PING")
        checks["redis"] = "ok"
    except Exception as exc:
        checks["redis"] = f"unreachable: {type(exc).__name__}"
    ready = all(v == "ok" for v in checks.values())
    return web.json_response({"status": "ready" if ready else "not_ready", "checks": checks},
                             status=200 if ready else 503)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
