"""Builds the aiohttp application; resources open and close with the app."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

from aiohttp import web

from actors.bus import CommandBus
from common import lifecycle
from common.clock import Clock, utcnow
from common.config import Settings
from common.secrets import derived_keys
from web import (
    card_webhooks,
    dashboard,
    health,
    metrics,
    openapi,
    pages,
    rate_limits,
    refund_pages,
    request_ids,
    routes,
)
from web.auth import signature_middleware
from web.context import CONTEXT, Context
from web.errors import error_middleware
from web.input_limits import body_limit_middleware, path_ids_middleware
from web.links import page as link_pages

log = logging.getLogger(__name__)


async def _start(wired: lifecycle.Wired, context: Context, stop: asyncio.Event) -> None:
    """Load what needs PostgreSQL once it answers, then keep the clock measured against Redis's until `stop`."""
    async def load() -> None:
        context.loaded = await derived_keys(wired.pool, wired.vault)
        await context.offset.check()

    if (await wired.start("web", stop, load))[0]:
        await context.offset.keep_checked(stop)


def init_app(settings: Settings, clock: Clock = utcnow) -> web.Application:
    app = web.Application(
        # Outermost, so it times and counts every answer, errors included.
        middlewares=[metrics.metrics_middleware,
                     request_ids.request_id_middleware, error_middleware,
                     body_limit_middleware(settings.max_body_bytes), signature_middleware,
                     rate_limits.page_rate_limit_middleware, path_ids_middleware],
        client_max_size=settings.max_body_bytes,
    )
    app.on_response_prepare.append(rate_limits.add_headers)
    app.on_response_prepare.append(request_ids.add_header)

    async def resources(app: web.Application):
        async with lifecycle.opened(settings, pool_max=20, redis_connections=200) as wired:
            bus = CommandBus(wired.redis, wired.keys, f"web-{secrets.token_hex(6)}", settings.reply_timeout_s)
            await bus.start()
            offset = wired.clock("web")
            context = app[CONTEXT] = Context(settings, wired.pool, wired.redis, wired.keys, wired.vault, bus, offset,
                                             clock=clock)
            stop = asyncio.Event()
            starting = asyncio.create_task(_start(wired, context, stop))
            # Usually both answer at once and the process is ready as it starts listening; otherwise it listens
            # meanwhile, and answers 503 until they do.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(starting), lifecycle.PROBE_TIMEOUT_S)
            try:
                yield
            finally:
                stop.set()
                await starting
                await bus.stop()

    app.cleanup_ctx.append(resources)
    routes.add_routes(app)
    app.router.add_get(routes.PREFIX + "/openapi.json", openapi.serve)
    pages.add_routes(app)
    health.add_routes(app)
    metrics.add_routes(app)
    refund_pages.add_routes(app)
    link_pages.add_routes(app)
    card_webhooks.add_routes(app)
    dashboard.add_routes(app, settings)
    return app
