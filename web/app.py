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
from web.api import card_provider, openapi, routes
from web.dashboard import app_keys
from web.dashboard import routes as dashboard_routes
from web.edge import dashboard_site, health, metrics, rate_limits, request_ids
from web.edge.app_state import CONTEXT, ONE_COMMAND, Context
from web.edge.auth import signature_middleware
from web.edge.errors import error_middleware
from web.edge.input_limits import body_limit_middleware, path_ids_middleware
from web.pages import routes as page_routes

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
    app[ONE_COMMAND] = routes.ONE_COMMAND_HANDLERS
    app[app_keys.PREFIX] = prefix = dashboard_site.prefix(settings)
    app[app_keys.SECURE] = dashboard_site.secure_cookies(settings)
    # Every floor's routes in one table: the signed API, the buyers' pages, the probes, the card provider's calls,
    # and last the dashboard, whose catch-all takes what is left under its prefix, and the front door.
    app.router.add_routes([*routes.ROUTE_DEFS, *openapi.ROUTE_DEFS, *page_routes.ROUTE_DEFS, *health.ROUTE_DEFS,
                           *metrics.ROUTE_DEFS, *card_provider.ROUTE_DEFS, *dashboard_routes.route_defs(prefix)])
    return app
