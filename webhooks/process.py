"""The `webhooks` process: the dispatcher reading the events stream, and apscheduler driving its sweeps."""

from __future__ import annotations

import asyncio
import logging

from common import faults, lifecycle, logs, probes
from common.config import Settings
from common.mail import Mailer
from common.sweeps import Sweeps
from notify.notifier import Notifier
from notify.receipt_mailer import ReceiptMailer
from streams.names import NOTIFICATIONS_GROUP, WEBHOOKS_GROUP
from webhooks import settings as webhook_settings
from webhooks.dispatcher import Dispatcher, DispatchHooks

log = logging.getLogger(__name__)
RECLAIM_EVERY_S = 2.0
REPORT_EVERY_S = 10.0  # the retry queue's gauges: one count on a partial index
MAILS_EVERY_S = 5.0  # notification mails due (retries; new ones go right after their batch)
FAILING_EVERY_S = 60.0  # webhook endpoints failing for over an hour, card accounts the provider refuses


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


async def serve(settings: Settings, stop: asyncio.Event, hooks: DispatchHooks | None = None, *,
                dashboard_url: str = "") -> None:
    """The dispatcher, and the staff notifier beside it, whose mails link to the dashboard at `dashboard_url`."""
    knobs = webhook_settings.load()
    async with lifecycle.opened(settings, pool_max=6) as wired:
        dispatcher = Dispatcher(wired.pool, wired.redis, wired.keys, wired.vault, knobs, hooks=hooks)
        # The staff notifier is this process's second role: a consumer group of its own on the same stream.
        notifier = Notifier(wired.pool, wired.redis, wired.keys, Mailer.configured(settings), dashboard_url)
        async with probes.serving("webhooks", settings.host, settings.metrics_port,
                                  probes.basics(wired.pool, wired.redis)):
            if not ((await wired.start("webhooks", stop, dispatcher.start))[0]
                    and (await wired.start("webhooks", stop, notifier.start))[0]):
                return
            started, receipts = await wired.start("webhooks", stop, lambda: _receipt_mailer(settings, wired))
            if not started:
                return
            sweeps = Sweeps()
            sweeps.every(knobs.sweep_interval_s, _guarded(dispatcher.sweep), "webhook-retries")
            sweeps.every(RECLAIM_EVERY_S, _guarded(dispatcher.reclaim), "webhook-reclaim")
            sweeps.every(knobs.lease_s / 3, _guarded(dispatcher.renew), "webhook-leases")
            sweeps.every(REPORT_EVERY_S, _guarded(dispatcher.report), "webhook-gauges")
            sweeps.every(RECLAIM_EVERY_S, _guarded(notifier.reclaim), "notification-reclaim")
            sweeps.every(MAILS_EVERY_S, _guarded(notifier.send_mails), "notification-mails")
            sweeps.every(FAILING_EVERY_S, _guarded(notifier.sweep_failing_endpoints), "notification-failing-endpoints")
            sweeps.every(FAILING_EVERY_S, _guarded(notifier.sweep_card_account_errors), "notification-card-accounts")
            sweeps.start()
            logs.announce(log, f"webhooks: delivering events from {wired.keys.events} "
                               f"(consumer group {WEBHOOKS_GROUP}) to merchant endpoints")
            logs.announce(log, f"webhooks: {knobs.timeout_s:g} s per attempt, up to {knobs.per_endpoint} at once"
                               f" per endpoint; retries swept every {knobs.sweep_interval_s:g} s")
            logs.announce(log, f"webhooks: staff notifications from {wired.keys.events} (consumer group"
                               f" {NOTIFICATIONS_GROUP}), mailed {'over SMTP' if notifier.mailer else 'never: no SMTP_URL'}")
            try:
                await asyncio.gather(dispatcher.run(stop), notifier.run(stop),
                                     *([receipts.run(stop)] if receipts else []))
            finally:
                await sweeps.stop()
                await dispatcher.close()


async def _receipt_mailer(settings: Settings, wired) -> ReceiptMailer | None:
    """Receipts mailed to buyers, in this process beside the webhooks, when mail is configured."""
    mailer = Mailer.configured(settings)
    if mailer is None:
        return None
    receipts = ReceiptMailer(wired.pool, wired.redis, wired.keys, mailer)
    await receipts.start()
    logs.announce(log, f"webhooks: mailing receipts to buyers through {mailer.host}:{mailer.port}")
    return receipts
