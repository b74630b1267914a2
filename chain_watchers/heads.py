"""How a watcher learns that a network has a new head: announced by the node where it can (`eth_subscribe`
"newHeads" over the registry's `ws_url`), read every block time where it cannot.

A follower only records the newest head and wakes the watcher's loop; the pass that follows reads the chain itself
up to where its node is. A dropped subscription reconnects by itself, and reads the head on reconnecting, so a
pass over every block it missed follows at once: the scan cursor and the heights in PostgreSQL, not the
announcements, say what was read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from chain_watchers.registry import Network
from common import backoff

log = logging.getLogger(__name__)
ReadHead = Callable[[], Awaitable[int | None]]  # None: not now (the network's RPC is backing off)


class Heads:
    """The newest head each followed network announced, and an event set whenever one moves."""

    def __init__(self, *, poll_floor_s: float, retry_max_s: float) -> None:
        self.poll_floor_s, self.retry_max_s = poll_floor_s, retry_max_s
        self.latest: dict[str, int] = {}
        self.moved = asyncio.Event()
        self.subscribed: dict[str, bool] = {}  # slug -> whether its subscription is up now (for logs and tests)
        self._followers: dict[str, asyncio.Task] = {}

    def announce(self, slug: str, head: int) -> None:
        if head > self.latest.get(slug, -1):
            self.latest[slug] = head
            self.moved.set()

    def follow(self, network: Network, read_head: ReadHead, fallback_s: float) -> None:
        """Start following `network` (once): by subscription where it has a `ws_url`, else by reading its head
        every block time (never faster than the floor; `fallback_s` where the registry names no block time)."""
        if network.slug in self._followers:
            return
        if network.ws_url:
            follower = self._subscribed(network)
        else:
            every = max(network.block_time_s or fallback_s, self.poll_floor_s)
            follower = self._polled(network.slug, read_head, every)
        self._followers[network.slug] = asyncio.create_task(follower, name=f"heads-{network.slug}")

    async def _polled(self, slug: str, read_head: ReadHead, every_s: float) -> None:
        while True:
            try:
                head = await read_head()
            except Exception as error:  # noqa: BLE001 - the pass meets the same fault, reports it and backs the network off
                log.debug("heads %s: %s: %s", slug, type(error).__name__, error)
            else:
                if head is not None:
                    self.announce(slug, head)
            await asyncio.sleep(every_s)

    async def _subscribed(self, network: Network) -> None:
        from web3 import AsyncWeb3, WebSocketProvider  # the client libraries load only in a watcher process

        failures = 0
        while True:
            try:
                async with AsyncWeb3(WebSocketProvider(network.ws_url, max_connection_retries=1)) as w3:
                    await w3.eth.subscribe("newHeads")
                    # Blocks announced while the socket was down are caught up by the pass this wakes.
                    self.announce(network.slug, await w3.eth.block_number)
                    if failures:
                        log.info("heads %s: subscribed again after %d failures", network.slug, failures)
                    failures = 0
                    self.subscribed[network.slug] = True
                    async for message in w3.socket.process_subscriptions():
                        self.announce(network.slug, int(message["result"]["number"]))
                raise ConnectionError("the node ended the subscription")
            except asyncio.CancelledError:
                raise
            # Whatever the socket or the node did (refused, closed, answered nonsense), the loop's own pass on the
            # watcher's interval keeps payments moving while this tries again.
            except Exception as error:  # noqa: BLE001
                self.subscribed[network.slug] = False
                failures += 1
                pause = backoff.exponential(failures, 0.5, self.retry_max_s)
                # One line for a run of failures (no network, a node down); the passes go on without it meanwhile.
                (log.warning if failures == 1 else log.debug)(
                    "heads %s: subscription lost (%s: %s); again in %.1f s%s", network.slug, type(error).__name__,
                    error, pause, ", quietly until it subscribes" if failures == 1 else "")
                await asyncio.sleep(pause)

    async def close(self) -> None:
        for task in self._followers.values():
            task.cancel()
        for task in self._followers.values():
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._followers.clear()
