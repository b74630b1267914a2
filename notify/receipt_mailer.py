"""Receipts mailed to buyers: after payment.settled and payment.refund.executed of an order that has a buyer's
address (the API's `customer_email`, or one given on the checkout page), when SMTP_URL and MAIL_FROM are set.

It reads the events stream in a consumer group of its own and writes one `receipt_mails` row per mail before it
acknowledges, so a crash loses none; rows are then sent, and a failed send is retried with a backoff, a few times.
The mail names no one but the buyer it goes to, and every value from a user is escaped in its HTML part."""

from __future__ import annotations

import asyncio
import functools
import html
import logging
from datetime import datetime, timedelta

import asyncpg
import msgspec

from actors.publication import PublicEvent
from actors.views import OrderView, stored_view
from common import backoff, faults, money
from common.clock import Clock, utcnow
from common.mail import Mail, Mailer, MailError
from streams.connection import Client
from streams.consumer import Entry
from streams.names import RECEIPTS_GROUP, Keys
from streams.reader import Reader

log = logging.getLogger(__name__)
KINDS = {"payment.settled": "payment", "payment.refund.executed": "refund"}
MAX_ATTEMPTS = 6
LEASE = timedelta(seconds=60)  # a claimed row is due again after this if its sender died
BATCH = 50
RECLAIM_IDLE_MS = 30_000  # read this long ago and unacknowledged: its reader died
_decode = msgspec.json.Decoder(PublicEvent).decode


def compose(kind: str, order: OrderView, merchant_name: str, to: str) -> Mail:
    """The receipt mail, from the order as it stands: its amounts, its refunds and the receipt's address."""
    url = order.receipt_url
    number = order.order_number
    if kind == "refund":
        refunded = money.format(order.amount_refunded)
        subject = f"Refund from {merchant_name}, order #{number}"
        lines = [f"{merchant_name} refunded {refunded} USD of order #{number}."]
    else:
        subject = f"Your receipt from {merchant_name}, order #{number}"
        lines = [f"You paid {money.format(order.amount_paid)} USD to {merchant_name} for order #{number}."]
    shown = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    if url is None:  # an order created before receipts had addresses: the mail tells the amounts alone
        return Mail(to=to, subject=subject, text="\n".join([*lines, ""]), html=shown)
    text = "\n".join([*lines, "", f"Your receipt: {url}", ""])
    page = f'{shown}<p><a href="{html.escape(url, quote=True)}">View your receipt</a></p>'
    return Mail(to=to, subject=subject, text=text, html=page)


class ReceiptMailer:
    def __init__(self, pool: asyncpg.Pool, redis: Client, keys: Keys, mailer: Mailer, *, clock: Clock = utcnow,
                 consumer: str = "") -> None:
        self.pool, self.redis, self.keys, self.mailer, self.clock = pool, redis, keys, mailer, clock
        self.reader = Reader(redis, keys.events, RECEIPTS_GROUP, self._ingest, batch=BATCH,
                             reclaim_idle_ms=RECLAIM_IDLE_MS, name=consumer, away=faults.READING,
                             report=functools.partial(faults.report, log, "receipts: reading events", then="retrying"))

    async def start(self) -> None:
        await self.reader.start()

    async def run(self, stop: asyncio.Event) -> None:
        """Read until stopped, sending what is due (new mails and retries) after each read."""
        await self.reader.run(stop, lambda _: self.send_due())

    async def consume(self, block_ms: int = 0) -> int:
        """Read new events; record a mail for each that sends one to an order with an address. Returns how many."""
        return await self.reader.consume(block_ms)

    async def _ingest(self, entries: list[Entry]) -> int:
        wanted = []
        for entry in entries:
            try:
                event = _decode(entry.fields[b"e"])
            except (KeyError, msgspec.DecodeError):
                continue  # the webhook dispatcher logs it
            if event.type in KINDS:
                wanted.append((event.id, event.order_id, KINDS[event.type]))
        return await self._record(wanted) if wanted else 0

    async def _record(self, wanted: list[tuple[str, str, str]]) -> int:
        now = self.clock()
        rows = await self.pool.fetch(
            "INSERT INTO receipt_mails (mail_id, order_id, kind, created_at, due_at)"
            " SELECT w.mail_id, w.order_id, w.kind, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[])"
            "  AS w(mail_id, order_id, kind) JOIN orders o USING (order_id)"
            "  LEFT JOIN receipt_emails r USING (order_id)"
            " WHERE o.customer_email IS NOT NULL OR r.email IS NOT NULL"
            " ON CONFLICT (mail_id) DO NOTHING RETURNING mail_id",
            [w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted], now)
        return len(rows)

    async def send_due(self) -> int:
        """Send the mails that are due (new ones and retries); returns how many were sent."""
        now = self.clock()
        claimed = await self.pool.fetch(
            "UPDATE receipt_mails SET due_at = $2 WHERE mail_id IN (SELECT mail_id FROM receipt_mails"
            " WHERE due_at <= $1 ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)"
            " RETURNING mail_id, order_id, kind, attempts", now, now + LEASE, BATCH)
        sent = 0
        for row in claimed:
            sent += await self._send(row)
        return sent

    async def _send(self, row: asyncpg.Record) -> int:
        found = await self.pool.fetchrow(
            "SELECT o.state, o.state_schema, m.name, r.email FROM orders o JOIN merchants m USING (merchant_id)"
            " LEFT JOIN receipt_emails r USING (order_id) WHERE o.order_id = $1", row["order_id"])
        order = stored_view(found["state"], found["state_schema"])
        to = order.customer_email or found["email"]
        try:
            await self.mailer.send(compose(row["kind"], order, found["name"], to))
        except MailError as exc:
            attempts = row["attempts"] + 1
            again = None if attempts >= MAX_ATTEMPTS else self.clock() + backoff.exponential(
                attempts, timedelta(seconds=30), timedelta(hours=1))
            log.warning("receipts: %s (attempt %d%s)", exc, attempts, "" if again else ", giving up")
            await self.pool.execute("UPDATE receipt_mails SET attempts = $2, due_at = $3, last_error = $4"
                                    " WHERE mail_id = $1", row["mail_id"], attempts, again, str(exc)[:500])
            return 0
        await self.pool.execute("UPDATE receipt_mails SET attempts = attempts + 1, due_at = NULL, sent_at = $2,"
                                " last_error = NULL WHERE mail_id = $1", row["mail_id"], self.clock())
        return 1


async def mail_when_given(conn, order_id: str, paid: bool, at: datetime) -> None:
    """A buyer gave an address after the order was paid: its receipt is due now (once per order)."""
    if paid:
        await conn.execute("INSERT INTO receipt_mails (mail_id, order_id, kind, created_at, due_at)"
                           " VALUES ($1, $2, 'payment', $3, $3) ON CONFLICT (mail_id) DO NOTHING",
                           f"given:{order_id}", order_id, at)
