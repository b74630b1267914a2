"""The `webhooks` process: the dispatcher reading the events stream, and apscheduler driving its sweeps."""

from __future__ import annotations

import asyncio
import logging

from common import faults, logs, probes, wiring
from common.config import Settings
from common.sweeps import Sweeps
from streams.names import WEBHOOKS_GROUP
from webhooks import settings as webhook_settings
from webhooks.dispatcher import Dispatcher, DispatchHooks

log = logging.getLogger(__name__)
RECLAIM_EVERY_S = 2.0
REPORT_EVERY_S = 10.0  # the retry queue's gauges: one count on a partial index


def _guarded(job):
    """A sweep that fails is logged and simply runs again at its next tick: with its traceback when the fault
    is this code's, since no tick will cure that."""
    async def run() -> None:
        try:
            await job()
        except asyncio.CancelledError:
            pass  # shutting down mid-sweep: what it claimed is leased, and due again after the lease
        except Exception as exc:  # noqa: BLE001 - faults.report tells a bug from a dependency away
            faults.report(log, f"webhooks: {job.__name__}", exc, "the next tick retries")
    return run


async def serve(settings: Settings, stop: asyncio.Event, hooks: DispatchHooks | None = None) -> None:
    knobs = webhook_settings.load()
    async with wiring.opened(settings, pool_min=2, pool_max=6) as wired:
        dispatcher = Dispatcher(wired.pool, wired.redis, wired.keys, wired.vault, knobs, hooks=hooks)
        await dispatcher.start()
        sweeps = Sweeps()
        sweeps.every(knobs.sweep_interval_s, _guarded(dispatcher.sweep), "webhook-retries")
        sweeps.every(RECLAIM_EVERY_S, _guarded(dispatcher.reclaim), "webhook-reclaim")
        sweeps.every(knobs.lease_s / 3, _guarded(dispatcher.renew), "webhook-leases")
        sweeps.every(REPORT_EVERY_S, _guarded(dispatcher.report), "webhook-gauges")
        sweeps.start()
        logs.announce(log, f"webhooks: delivering events from {wired.keys.events} "
                           f"(consumer group {WEBHOOKS_GROUP}) to merchant endpoints")
        logs.announce(log, f"webhooks: {knobs.timeout_s:g} s per attempt, up to {knobs.per_endpoint} at once per"
                           f" endpoint; retries swept every {knobs.sweep_interval_s:g} s")
        try:
            async with probes.serving("webhooks", settings.host, settings.metrics_port,
                                      probes.basics(wired.pool, wired.redis)):
                await dispatcher.run(stop)
        finally:
            await sweeps.stop()
            await dispatcher.close()
