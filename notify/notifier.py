"""The notifier: the events stream, read through a consumer group of its own, becomes staff notifications; their
mails are sent with retries.

At least once, never in the order's way: it only reads what the actors already published. An entry is acknowledged
after its notifications are written (a second reading adds nothing: the table's unique key), and a mail is marked
sent after the server took it, so a crash in between sends it again rather than never. A mail the server refuses is
retried with backoff, counted (`notification_mails_total`) and logged; after MAX_MAIL_ATTEMPTS it is given up, and
the notification still shows in the bell.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from datetime import timedelta
from urllib.parse import urlsplit

import asyncpg
import msgspec

from actors.publication import PublicEvent
from common import backoff, faults, metrics
from common.clock import Clock, iso, utcnow
from common.mail import Mail, Mailer, MailError
from notify import kinds, store
from streams.connection import Client
from streams.consumer import Entry
from streams.names import NOTIFICATIONS_GROUP, Keys
from streams.reader import Reader

log = logging.getLogger(__name__)
_decode_public = msgspec.json.Decoder(PublicEvent).decode
BATCH = 100
RECLAIM_IDLE_MS = 30_000
MAIL_LEASE = timedelta(seconds=60)
MAX_MAIL_ATTEMPTS = 8  # about four hours of retries
FIRST_RETRY, LONGEST_RETRY = timedelta(seconds=30), timedelta(hours=1)
FAILING_FOR = timedelta(hours=1)


class Notifier:
    def __init__(self, pool: asyncpg.Pool, redis: Client, keys: Keys, mailer: Mailer | None, dashboard_url: str, *,
                 clock: Clock = utcnow, group: str = NOTIFICATIONS_GROUP, consumer: str = ""):
        self.pool, self.redis, self.keys, self.mailer, self.clock = pool, redis, keys, mailer, clock
        self.dashboard_url = dashboard_url.rstrip("/")
        self.reader = Reader(redis, keys.events, group, self._ingest, batch=BATCH, reclaim_idle_ms=RECLAIM_IDLE_MS,
                             name=consumer, away=faults.READING,
                             report=functools.partial(faults.report, log, "notifications: reading events",
                                                      then="retrying"))

    async def start(self, from_id: str = "$") -> None:
        """From new events on by default: a first start tells nobody of the past."""
        await self.reader.start(from_id)

    async def run(self, stop: asyncio.Event) -> None:
        """Read until stopped, each batch's mails sent right after it (a sweep sends retries and the rest)."""
        await self.reader.run(stop, self._mail_made)

    async def _mail_made(self, made: int) -> None:
        if made:
            await self.send_mails()

    async def consume(self, block_ms: int = 0) -> int:
        """One read of new entries; returns how many notifications they made."""
        return await self.reader.consume(block_ms)

    async def reclaim(self) -> int:
        """Entries a dead notifier read but never acknowledged."""
        return await self.reader.reclaim()

    async def _ingest(self, entries: list[Entry]) -> int:
        notices = []
        for entry in entries:
            try:
                public = _decode_public(entry.fields[b"e"])
                notice = kinds.from_event(public.id, public.type, public.merchant_id, public.livemode, public.data)
            except (KeyError, msgspec.DecodeError, msgspec.ValidationError):
                log.error("notifications: skipping undecodable event entry %s", entry.entry_id)
                continue
            if notice is not None:
                notices.append(notice)
        return await self._record(notices)

    async def _record(self, notices: list[kinds.Notice]) -> int:
        if not notices:
            return 0
        async with self.pool.acquire() as conn, conn.transaction():
            made = await store.record(conn, notices, self.clock(), self.mailer is not None)
        metrics.NOTIFICATIONS.inc(made)
        return made

    async def sweep_failing_endpoints(self) -> int:
        """Webhook endpoints failing for over an hour: one notice per failing episode."""
        now = self.clock()
        async with self.pool.acquire() as conn:
            failing = await store.failing_endpoints(conn, now - FAILING_FOR)
        return await self._record([kinds.webhook_failing(e["endpoint_id"], e["merchant_id"], e["livemode"],
                                                         urlsplit(e["url"]).hostname or "", iso(e["failing_since"]))
                                   for e in failing])

    async def sweep_card_account_errors(self) -> int:
        """Card accounts the provider refuses: one notice per error episode, as soon as the sweep sees it."""
        async with self.pool.acquire() as conn:
            refused = await store.card_account_errors(conn)
        return await self._record([kinds.card_account_error(a["account_id"], a["merchant_id"], a["livemode"],
                                                            a["provider"], a["last_error"], a["last_error_at"])
                                   for a in refused])

    async def send_mails(self) -> int:
        """Send the mails that are due; returns how many were sent."""
        if self.mailer is None:
            return 0
        now = self.clock()
        async with self.pool.acquire() as conn:
            due = await store.claim_mails(conn, now, now + MAIL_LEASE, BATCH)
        sent = 0
        for row in due:
            mail = Mail(to=row["email"], subject=row["title"],
                        text=f"{row['body']}\n\nOpen it in the dashboard: {self.dashboard_url}{row['link']}\n")
            try:
                await self.mailer.send(mail)
            except MailError as exc:
                await self._failed(row, str(exc))
                continue
            async with self.pool.acquire() as conn:
                await store.mailed(conn, row["notification_id"])
            metrics.NOTIFICATION_MAILS.labels("sent").inc()
            sent += 1
        return sent

    async def _failed(self, row: asyncpg.Record, error: str) -> None:
        attempts = row["mail_attempts"] + 1
        retry_at = None if attempts >= MAX_MAIL_ATTEMPTS else \
            self.clock() + backoff.exponential(attempts, FIRST_RETRY, LONGEST_RETRY)
        async with self.pool.acquire() as conn:
            await store.mail_failed(conn, row["notification_id"], error, retry_at)
        outcome = "retrying" if retry_at else "failed"
        metrics.NOTIFICATION_MAILS.labels(outcome).inc()
        log.log(logging.WARNING if retry_at else logging.ERROR,
                "notifications: mail %s, attempt %d: %s (%s)", row["notification_id"], attempts, outcome, error)
