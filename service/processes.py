"""The long-running processes of the Procfile: web, actors, scheduler, webhooks and one chain watcher per family.

Each runs on uvloop: its transports and timers are native code, and every process here spends most of its time in
them (sending answers, replies and commits; bench/run.py, docs/benchmarks.md)."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import TYPE_CHECKING

import uvloop
from aiohttp import web

from actors import gauges
from actors.applier import BatchHooks
from actors.bus import CommandBus
from actors.worker import Worker
from common import db, lifecycle, logs, probes
from common.config import Settings
from service import ports
from service.scheduler import Timers, start
from streams.reader import consumer_name

if TYPE_CHECKING:  # the webhooks process alone loads its package
    from webhooks.dispatcher import DispatchHooks

log = logging.getLogger(__name__)


def run_web(settings: Settings, share_port: bool = False) -> None:
    """Serve the web process. Its port is its own unless `share_port` (`service web --share-port`): web processes of
    one deployment may then listen on it together (SO_REUSEPORT, the kernel spreading connections), while a second
    service started on a taken port by mistake stops at once naming what holds it, instead of taking half of the
    first one's requests."""
    from web.app import init_app
    from web.edge.dashboard_site import dashboard_url

    if not share_port:
        try:
            ports.check_free(settings.host, settings.port)
        except ports.PortTaken as exc:
            raise SystemExit(f"web: cannot serve on {settings.host}:{settings.port}: {exc}") from None

    logs.announce(log, f"web: serving the B2B API on {settings.public_base()}/b2b/v1")
    logs.announce(log, f"web: hosted checkout pages on {settings.checkout_base()}/c/<session_key>")
    logs.announce(log, f"web: OpenAPI document at {settings.public_base()}/b2b/v1/openapi.json")
    logs.announce(log, f"web: merchant dashboard on {dashboard_url(settings)}/signin")
    logs.announce(log, f"web: metrics on http://{settings.host}:{settings.port}/metrics (probes /healthz, /readyz)")
    app = init_app(settings)
    _settle_garbage_collector()
    web.run_app(app, host=settings.host, port=settings.port, print=None, reuse_port=share_port, access_log=None,
                loop=uvloop.new_event_loop())


def _settle_garbage_collector() -> None:
    """Keep what start-up made (modules, templates, registries) out of every later collection, which
    would otherwise walk it all again and pause request handling."""
    gc.collect()
    gc.freeze()


async def _actors(settings: Settings, hooks: BatchHooks | None) -> None:
    stop = lifecycle.stop_event()
    worker_id = consumer_name()  # its name in the actors' consumer group too
    # Named in pg_stat_activity: which worker a session, a lock or a commit belongs to.
    named = {**db.ACTOR_SETTINGS, "application_name": f"actors {worker_id}"}
    # A connection a lane, and two for the outbox sweep and the gauges.
    async with lifecycle.opened(settings, pool_max=settings.actor_lanes + 2, server_settings=named) as wired:
        pool, redis, keys = wired.pool, wired.redis, wired.keys
        clock = wired.clock("actors")
        worker = Worker(pool, redis, keys, worker_id,
                        settings.lease_ttl_ms, settings.batch_size, settings.actor_lanes,
                        max_deliveries=settings.command_max_deliveries, retention_s=settings.stream_retention_s,
                        max_skew_s=settings.command_max_skew_s, hooks=hooks, clock=clock)
        checks = dict(probes.basics(pool, redis), clock=probes.clock(clock),
                      leases=lambda: gauges.leases_check(redis, keys, worker.leases.owned))
        async with probes.serving("actors", settings.host, settings.metrics_port, checks):
            if not (await wired.start("actors", stop))[0]:
                return
            logs.announce(log, f"actors: worker {worker_id} serving {settings.partitions} partitions")
            _settle_garbage_collector()
            sweeper = asyncio.create_task(worker.outbox.keep_swept(stop))
            reporter = asyncio.create_task(gauges.keep_refreshed(pool, redis, keys, settings.lease_ttl_ms, stop))
            try:
                await worker.run(stop)
            finally:
                sweeper.cancel()
                reporter.cancel()


def run_actors(settings: Settings, hooks: BatchHooks | None = None) -> None:
    uvloop.run(_actors(settings, hooks))


async def _scheduler(settings: Settings) -> None:
    stop = lifecycle.stop_event()
    async with lifecycle.opened(settings, pool_max=2) as wired, wired.measured("scheduler", stop) as clock:
        if clock is None:
            return
        bus = CommandBus(wired.redis, wired.keys, "scheduler", settings.reply_timeout_s)
        await bus.start()
        scheduler = start(Timers(wired.pool, bus, offset=clock), settings.scheduler_interval_s)
        logs.announce(log, f"scheduler: sweeping due timers every {settings.scheduler_interval_s} s")
        try:
            await stop.wait()
        finally:
            scheduler.shutdown(wait=False)
            await bus.stop()


def run_scheduler(settings: Settings) -> None:
    uvloop.run(_scheduler(settings))


async def _webhooks(settings: Settings, hooks: DispatchHooks | None) -> None:
    from web.edge.dashboard_site import dashboard_url
    from webhooks.process import serve

    await serve(settings, lifecycle.stop_event(), hooks, dashboard_url=dashboard_url(settings))


def run_webhooks(settings: Settings, hooks: DispatchHooks | None = None) -> None:
    uvloop.run(_webhooks(settings, hooks))


async def _watch(settings: Settings, family: str) -> None:
    from chain_watchers.runner import serve

    await serve(settings, family, lifecycle.stop_event())


async def _cards(settings: Settings) -> None:
    from cards.refunds import serve

    await serve(settings, lifecycle.stop_event())


def run_cards(settings: Settings) -> None:
    uvloop.run(_cards(settings))


def run_watch(settings: Settings, family: str) -> None:
    uvloop.run(_watch(settings, family))
