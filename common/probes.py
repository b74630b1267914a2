"""`/healthz`, `/readyz` and `/metrics`: the checks every process answers with, and the small server a process
without an HTTP port of its own runs them on (`--metrics-port` / METRICS_PORT).

`/healthz`: the process answers. `/readyz`: it can serve: PostgreSQL and Redis reachable, every migration of
this release applied, its clock within the bound of Redis's, and whatever the process adds (the actors: their
leases, see actors/gauges.py). A process that started while a dependency was away answers here meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from common import db, logs
from common.clock_offset import ClockOffset

CHECK_TIMEOUT_S = 2.0
Check = Callable[[], Awaitable[str]]  # "ok", or what is wrong

log = logging.getLogger(__name__)


async def postgres(pool: asyncpg.Pool) -> str:
    async with pool.acquire() as conn:
        missing = await db.missing_migrations(conn)
    return "ok" if not missing else "migrations missing: " + ", ".join(missing)


async def redis(ping: Callable[[], Awaitable[object]]) -> str:
    await ping()
    return "ok"


def clock(offset: ClockOffset) -> Check:
    """The process's clock against Redis's, as last measured (common/clock_offset.py)."""
    async def check() -> str:
        return offset.verdict()
    return check


def basics(pool: asyncpg.Pool, client) -> dict[str, Check]:
    """What every process checks: its pool, and its Redis client (a connection of the pool answers PING)."""
    return {"postgres": lambda: postgres(pool), "redis": lambda: redis(client.ping)}


async def _run(check: Check) -> str:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S):
            return await check()
    except Exception as exc:  # noqa: BLE001 - any failure is the answer itself
        return f"unreachable: {type(exc).__name__}"


async def readiness(checks: dict[str, Check]) -> web.Response:
    found = {name: await _run(check) for name, check in checks.items()}
    ready = all(v == "ok" for v in found.values())
    return web.json_response({"status": "ready" if ready else "not_ready", "checks": found},
                             status=200 if ready else 503)


async def healthz(_request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def metrics(_request: web.Request) -> web.Response:
    return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})


@contextlib.asynccontextmanager
async def serving(process: str, host: str, port: int, checks: dict[str, Check]) -> AsyncIterator[None]:
    """The probes and metrics on host:port while the block runs; nothing with port 0."""
    if not port:
        yield
        return
    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", lambda _request: readiness(checks))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        logs.announce(log, f"{process}: metrics on http://{host}:{port}/metrics (probes /healthz, /readyz)")
        yield
    finally:
        await runner.cleanup()
