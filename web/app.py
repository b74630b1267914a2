"""Builds the aiohttp application; resources open and close with the app."""

from __future__ import annotations

import logging
import secrets

from aiohttp import web

from common import db
from common.clock import Clock, utcnow
from common.config import Settings
from common.secrets import Vault, derived_keys, master_keys
from streams import connection
from streams.names import Keys
from actors.bus import CommandBus
from web import dashboard, health, metrics, openapi, pages, rate_limits, refund_pages, request_ids, routes
from web.auth import signature_middleware
from web.context import CONTEXT, Context
from web.errors import error_middleware
from web.input_limits import body_limit_middleware, path_ids_middleware

log = logging.getLogger(__name__)


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
        pool = await db.connect(settings.database_url, max_size=20)
        redis = connection.connect(settings.redis_url, max_connections=200)
        keys = Keys(settings.redis_prefix, settings.partitions)
        vault = Vault(*master_keys(settings.master_key, settings.data_dir))
        bus = CommandBus(redis, keys, f"web-{secrets.token_hex(6)}", settings.reply_timeout_s)
        await bus.start()
        app[CONTEXT] = Context(settings, pool, redis, keys, vault, bus, await derived_keys(pool, vault), clock=clock)
        yield
        await bus.stop()
        await redis.aclose()
        await pool.close()

    app.cleanup_ctx.append(resources)
    routes.add_routes(app)
    app.router.add_get(routes.PREFIX + "/openapi.json", openapi.serve)
    pages.add_routes(app)
    health.add_routes(app)
    metrics.add_routes(app)
    refund_pages.add_routes(app)
    dashboard.add_routes(app, settings)
    return app
