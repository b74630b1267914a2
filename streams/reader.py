"""A service following one stream through a consumer group of its own (the webhooks dispatcher, the staff notifier
and the receipt mailer on the events stream), at least once: each batch is handed to the service, then acknowledged,
so a crash in between reads it again; what a dead reader left unacknowledged is taken over; a group Redis lost is
made again; a dependency away is waited out. Which errors are a dependency away, and how they are reported, is the
service's to say: it knows what it writes to."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable

from redis.exceptions import ResponseError

from streams.connection import Client
from streams.consumer import Consumer, Entry, lost_group, unblocked

log = logging.getLogger(__name__)
BLOCK_MS = 500  # a running reader's wait for new entries: how soon it sees a stop
AWAY_PAUSE_S = 0.5  # between reads while a dependency is away

Handle = Callable[[list[Entry]], Awaitable[int]]


def consumer_name() -> str:
    """A name of this process's own, for a consumer group shared with other processes."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


class Reader:
    """Reads `stream` as `name` of `group`, `batch` entries at a time, into `handle`, which returns what the batch
    made (deliveries, notifications, mails); entries pending for `reclaim_idle_ms` belong to a dead reader. A
    failure that is an instance of `away` is passed to `report` and read again after a pause."""

    def __init__(self, redis: Client, stream: str, group: str, handle: Handle, *, batch: int, reclaim_idle_ms: int,
                 away: tuple[type[BaseException], ...], report: Callable[[BaseException], None],
                 name: str = "") -> None:
        self.redis, self.stream, self.handle = redis, stream, handle
        self.batch, self.reclaim_idle_ms, self.away, self.report = batch, reclaim_idle_ms, away, report
        self.consumer = Consumer(redis, group, name or consumer_name())

    async def start(self, from_id: str = "0") -> None:
        """The group, reading from `from_id` when it is new."""
        await self.consumer.ensure(self.stream, from_id)

    async def consume(self, block_ms: int = 0) -> int:
        """One read of new entries, waiting up to block_ms for the first."""
        return await self._handled(await self.consumer.read(self.redis, [self.stream], self.batch, block_ms))

    async def reclaim(self) -> int:
        """Entries a dead reader read and never acknowledged: its handling may not have happened."""
        return await self._handled(await self.consumer.claim(self.stream, self.batch, self.reclaim_idle_ms))

    async def retry(self) -> int:
        """The entries this reader failed to handle, again."""
        return await self._handled(await self.consumer.unacknowledged(self.stream, self.batch))

    async def _handled(self, entries: list[Entry]) -> int:
        if not entries:
            return 0
        made = await self.handle(entries)
        await self.consumer.ack(self.stream, [entry.entry_id for entry in entries])
        return made

    async def run(self, stop: asyncio.Event, after: Callable[[int], Awaitable[object]] | None = None) -> None:
        """Read until stopped, what a dead reader left first; `after` runs after each read with what it made."""
        reclaimed, failed = False, False
        while not stop.is_set():
            try:
                if not reclaimed:  # retried like a read when a dependency fails
                    await self.reclaim()
                    reclaimed = True
                if failed:  # the batch a dependency stopped, before anything new
                    await self.retry()
                    failed = False
                made = await self.consume(BLOCK_MS)
                if after is not None:
                    await after(made)
            except ResponseError as exc:
                if unblocked(exc):  # its node became a replica (a failover): read again
                    continue
                if not lost_group(exc):
                    raise
                # Redis lost its data (a restart without persistence): every entry of the new stream is unread.
                log.warning("%s: consumer group %s lost; making it again", self.stream, self.consumer.group)
                await self.start()
            except self.away as exc:
                failed = True
                self.report(exc)
                await asyncio.sleep(AWAY_PAUSE_S)
