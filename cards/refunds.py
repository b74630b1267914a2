"""The card refund sender: carries each APPROVED card refund out at the merchant's provider, exactly once.

Exactly once, across crashes: the provider call carries an idempotency key derived from the refund (and its retry
number), and before any call the sender asks the provider for a refund it already made for that refund and attempt
(the metadata names both), so a crash between the provider's answer and the actor's commit, or a provider that
ignores idempotency keys, still ends with one provider refund. The sender reports facts; the order actor decides.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket

import asyncpg
from redis.exceptions import RedisError

from actors.bus import CommandBus
from actors.rules import CARD
from actors.views import OrderView, RefundView, stored_view
from cards import accounts, amounts
from cards.events import refund_reported
from cards.provider import AccountRefused, CardProvider, ProviderRefused, ProviderUnavailable, RefundFact
from cards.providers import open_provider
from common import db, faults, lifecycle, logs
from common.clock import Clock, utcnow
from common.clock_offset import ClockOffset
from common.config import Settings
from common.secrets import Vault
from streams.producer import ReplyTimeout

log = logging.getLogger(__name__)
_LOCK = 7_204_700  # advisory lock: one sender at a time, a second process stands by
BATCH = 100


def idempotency_key(refund_id: str, attempt: int) -> str:
    return refund_id if attempt == 0 else f"{refund_id}:retry:{attempt}"


def paid_by(order: OrderView, refund: RefundView) -> str | None:
    """The card payment a refund goes back to: the latest one large enough to return it whole."""
    return next((p.tx_hash for p in reversed(order.payments) if p.network == CARD and p.amount >= refund.amount), None)


def failed(reason: str, payment_id: str = "") -> RefundFact:
    """An attempt that ends without a provider refund, for `reason`."""
    return RefundFact(refund_id="", status="failed", payment_id=payment_id, metadata={}, reason=reason)


class Sender:
    def __init__(self, pool: asyncpg.Pool, vault: Vault, bus: CommandBus, settings: Settings, *,
                 clock: Clock = utcnow, opener=open_provider, offset: ClockOffset | None = None) -> None:
        self.pool, self.vault, self.bus, self.settings, self.clock, self.opener = \
            pool, vault, bus, settings, clock, opener
        self.offset = offset  # while this clock is off, no pass runs: the reports it sends carry its time

    async def run_once(self) -> int:
        """One pass over the APPROVED card refunds; returns how many provider facts reached the actors."""
        if self.offset is not None and not self.offset.within:
            return 0
        rows = await self.pool.fetch(
            "SELECT o.state, o.state_schema FROM orders o WHERE o.order_id IN (SELECT order_id FROM refunds"
            " WHERE awaits_provider ORDER BY updated_at LIMIT $1)", BATCH)
        told = 0
        for row in rows:
            order = stored_view(row["state"], row["state_schema"])
            for refund in order.refunds:
                try:
                    told += await self.follow(order, refund)
                except ProviderUnavailable as exc:  # nothing half-done: the next pass asks the provider again
                    log.warning("card refund %s: provider unavailable (%s); retried on the next pass",
                                refund.refund_id, exc)
                except ReplyTimeout:
                    log.warning("card refund %s: the order's actor did not answer; reported again on the next pass",
                                refund.refund_id)
        return told

    async def follow(self, order: OrderView, refund: RefundView) -> int:
        """Send the refund if an attempt is due, or ask the provider about one still pending; report what it says."""
        attempt = refund.card_attempt_due
        pending = [a.tx_hash for a in refund.attempts if a.network == CARD and a.status == "verifying"]
        if attempt is None and not pending:
            return 0
        payment_id = paid_by(order, refund)
        if attempt is not None and payment_id is None:  # nothing to ask the provider, nothing learnt of the account
            return await self._report(
                order, refund, failed("no single card payment of this order covers the refund's amount"), attempt)
        account = await accounts.load(self.pool, self.vault, order.merchant_id, order.livemode)
        if account is None:
            if attempt is None:
                return 0
            return await self._report(order, refund, failed("the merchant's card account is disconnected"), attempt)
        provider = self.opener(account, self.settings)
        try:
            if attempt is not None:
                sent = await self._send(provider, order, refund, payment_id, attempt)
                told = await self._report(order, refund, sent, attempt)
            else:
                told = 0
                for provider_refund_id in pending:
                    fact = await provider.refund(provider_refund_id)
                    if fact.status != "pending":
                        told += await self._report(order, refund, fact, int(fact.metadata.get("attempt", "0")))
        except AccountRefused as exc:
            return await self._account_refused(account, order, refund, attempt, str(exc))
        finally:
            await provider.close()
        await accounts.worked(self.pool, account)
        return told

    async def _account_refused(self, account: accounts.CardAccount, order: OrderView, refund: RefundView,
                               attempt: int | None, error: str) -> int:
        """The account's error is recorded (its owners are told of it); an attempt due fails with it, visible and
        retried by the merchant once the account works, rather than asked again every pass with a refused key."""
        await accounts.refused(self.pool, account, error, self.clock())
        log.warning("card refund %s: the provider refused the merchant's card account: %s", refund.refund_id, error)
        if attempt is None:
            return 0  # a pending provider refund is asked about again on the next pass
        return await self._report(order, refund, failed(f"the card provider refused the merchant's account: {error}"),
                                  attempt)

    async def _send(self, provider: CardProvider, order: OrderView, refund: RefundView, payment_id: str,
                    attempt: int) -> RefundFact:
        found = await provider.find_refund(payment_id, refund.refund_id, attempt)
        if found is not None:
            log.info("card refund %s: the provider already holds %s; not sent again", refund.refund_id, found.refund_id)
            return found
        metadata = {"order_id": order.order_id, "refund_id": refund.refund_id, "merchant_id": order.merchant_id,
                    "livemode": "true" if order.livemode else "false", "attempt": str(attempt)}
        try:
            return await provider.create_refund(payment_id, amounts.refund_cents(refund.amount), metadata,
                                                idempotency_key(refund.refund_id, attempt))
        except ProviderRefused as exc:
            return failed(str(exc), payment_id)

    async def _report(self, order: OrderView, refund: RefundView, fact: RefundFact, attempt: int) -> int:
        envelope = refund_reported(fact, order.order_id, order.merchant_id, order.livemode, self.clock(),
                                   refund_id=refund.refund_id, attempt=attempt)
        reply = await self.bus.ask(envelope)
        if not reply.ok:
            log.warning("card refund %s: the order refused the provider's report: %s", refund.refund_id, reply.error)
        return int(reply.ok)

    async def run(self, stop: asyncio.Event, interval_s: float) -> None:
        while not stop.is_set():
            try:
                await self.run_once()
            # A dependency down (a failover included): try again next pass.
            except (*faults.UNAVAILABLE, asyncpg.PostgresError, RedisError) as exc:
                log.warning("card refunds: %s: %s; next pass in %.1f s", type(exc).__name__, exc, interval_s)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)


async def serve(settings: Settings, stop: asyncio.Event, interval_s: float = 2.0) -> None:
    """The `service cards` process: waits for PostgreSQL and Redis and for the sender's lock, then sends card
    refunds until `stop`; standing by again whenever the lock's connection dies."""
    async with lifecycle.opened(settings, pool_max=3) as wired:
        bus = CommandBus(wired.redis, wired.keys, f"cards-{socket.gethostname()}-{os.getpid()}",
                         settings.reply_timeout_s)
        await bus.start()
        try:
            async with wired.measured("cards", stop) as offset:
                if offset is None:
                    return

                async def send() -> None:
                    logs.announce(log, f"cards: sending card refunds to the providers every {interval_s} s")
                    await Sender(wired.pool, wired.vault, bus, settings, offset=offset).run(stop, interval_s)

                await db.hold_lock(wired.pool, _LOCK, stop, "cards", send)
        finally:
            await bus.stop()
