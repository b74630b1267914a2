"""The `webhooks` process: the dispatcher reading the events stream, and apscheduler driving its sweeps."""

from __future__ import annotations

import asyncio
import logging

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from common import faults, logs, probes, wiring
from common.config import Settings
from common.mail import Mailer
from common.secrets import derived_keys
from streams.names import WEBHOOKS_GROUP
from webhooks import settings as webhook_settings
from webhooks.dispatcher import Dispatcher, DispatchHooks
from webhooks.receipt_mail import ReceiptMailer

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
        scheduler = AsyncIOScheduler()
        scheduler.add_job(_guarded(dispatcher.sweep), "interval", seconds=knobs.sweep_interval_s, max_instances=1,
                          coalesce=True, id="webhook-retries")
        scheduler.add_job(_guarded(dispatcher.reclaim), "interval", seconds=RECLAIM_EVERY_S, max_instances=1,
                          coalesce=True, id="webhook-reclaim")
        scheduler.add_job(_guarded(dispatcher.renew), "interval", seconds=knobs.lease_s / 3, max_instances=1,
                          coalesce=True, id="webhook-leases")
        scheduler.add_job(_guarded(dispatcher.report), "interval", seconds=REPORT_EVERY_S, max_instances=1,
                          coalesce=True, id="webhook-gauges")
        scheduler.start()
        logs.announce(log, f"webhooks: delivering events from {wired.keys.events} "
                           f"(consumer group {WEBHOOKS_GROUP}) to merchant endpoints")
        logs.announce(log, f"webhooks: {knobs.timeout_s:g} s per attempt, up to {knobs.per_endpoint} at once per"
                           f" endpoint; retries swept every {knobs.sweep_interval_s:g} s")
        receipts = await _receipt_mailer(settings, wired)
        try:
            async with probes.serving("webhooks", settings.host, settings.metrics_port,
                                      probes.basics(wired.pool, wired.redis)):
                await asyncio.gather(dispatcher.run(stop), *([receipts.run(stop)] if receipts else []))
        finally:
            scheduler.shutdown(wait=False)
            await dispatcher.close()


async def _receipt_mailer(settings: Settings, wired) -> ReceiptMailer | None:
    """Receipts mailed to buyers, in this process beside the webhooks, when mail is configured."""
    mailer = Mailer.configured(settings)
    if mailer is None:
        return None
    keys = await derived_keys(wired.pool, wired.vault)
    receipts = ReceiptMailer(wired.pool, wired.redis, wired.keys, mailer, settings, keys.receipts)
    await receipts.start()
    logs.announce(log, f"webhooks: mailing receipts to buyers through {mailer.host}:{mailer.port}")
    return receipts
