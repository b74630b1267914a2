"""One watcher process per chain family: passes over a network when its head moves (chain_watchers/heads.py) or its
interval runs out, backs off a failing RPC, resumes from PostgreSQL.

Adapters report facts, verify.py turns them into verdicts, and only the order actor changes states: every verdict
reaches it as a command with a deterministic id, so a restart that repeats a report repeats nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import asyncpg
import msgspec

from actors.bus import CommandBus
from chain_watchers import discovery, follow
from chain_watchers.heads import Heads
from chain_watchers.registry import FAMILIES, Network, Registry, load_registry
from chain_watchers.watch import AdapterFactory, Bus, Watch, WatchOptions
from common import backoff, db, lifecycle, logs, metrics
from common.clock import Clock, utcnow
from common.clock_offset import ClockOffset
from common.config import Settings

log = logging.getLogger(__name__)
_LOCK = 7_204_600  # advisory lock ids 7204600..7204603, one per family: a second process of a family waits


class Tick(msgspec.Struct, frozen=True):
    """What one pass did, for logs and for tests that step a watcher by hand."""

    found: int = 0  # payments found without a hash
    payments: int = 0  # payments confirmed to the actor
    refunds: int = 0  # refund verdicts (executed or failed) sent to the actor
    failed: tuple[str, ...] = ()  # networks whose RPC failed this tick (now backing off)


# Errors only a fault of this code raises. Client libraries report a node's trouble (HTTP status, RPC error,
# timeout, unreadable answer) in other types, KeyError and ValueError among them.
CODE_FAULTS = (TypeError, AttributeError, NameError, AssertionError, ImportError, NotImplementedError)


class Backoff:
    """Per network: after n failures in a row, wait base * 2^(n-1) (capped, with jitter) before the next try."""

    def __init__(self, base_s: float, max_s: float) -> None:
        self.base_s, self.max_s = base_s, max_s
        self.failures: dict[str, int] = {}
        self.until: dict[str, float] = {}

    def ready(self, slug: str, now: float) -> bool:
        return now >= self.until.get(slug, 0.0)

    def failed(self, slug: str, now: float) -> float:
        n = self.failures[slug] = self.failures.get(slug, 0) + 1
        pause = backoff.exponential(n, self.base_s, self.max_s)
        self.until[slug] = now + pause
        return pause

    def succeeded(self, slug: str) -> None:
        self.failures.pop(slug, None)
        self.until.pop(slug, None)


def _node_failed(network: Network, error: Exception, failures: int, pause: float) -> None:
    """One line when a network's node stops answering (a machine with no network, a public RPC down), then quiet
    until it answers again: the pass retries with backoff, and the same error every few seconds to minutes told
    nobody anything new. The metric `watcher_ticks_total{outcome="failed"}` counts every one."""
    if failures == 1:
        log.warning("watch %s: its node does not answer (%s: %s); payments and refunds on %s wait, and it is tried"
                    " again with backoff, quietly until it answers (its node: `rpc_url` in the network registry,"
                    " docs/networks.md)", network.slug, type(error).__name__, error, network.slug)
    else:
        log.debug("watch %s: %s: %s; next try in %.1f s", network.slug, type(error).__name__, error, pause)


class Watcher:
    def __init__(self, family: str, registry: Registry, pool: asyncpg.Pool, bus: Bus, *,
                 open_adapter: AdapterFactory | None = None, options: WatchOptions | None = None,
                 clock: Clock = utcnow, offset: ClockOffset | None = None) -> None:
        if family not in FAMILIES:
            raise ValueError(f"unknown chain family {family!r}; one of {', '.join(FAMILIES)}")
        if open_adapter is None:
            # The client libraries load only in a watcher process.
            from chain_watchers.clients import open_adapter
        self.family = family
        self.offset = offset  # while this clock is off, no pass runs: the verdicts it sends carry its time
        self.networks: tuple[Network, ...] = tuple(n for n in registry.networks if n.family == family)
        self.options = options or WatchOptions()
        self.watch = Watch(pool, bus, open_adapter, self.options, clock)
        self.backoff = Backoff(self.options.backoff_base_s, self.options.backoff_max_s)
        self.heads = Heads(poll_floor_s=self.options.head_poll_s, retry_max_s=self.options.backoff_max_s)

    async def run_once(self) -> Tick:
        """One pass over every network of the family, with no head announced (checks fall back on the time)."""
        ticks = [await self.run_network(network, None) for network in self.networks]
        return Tick(sum(t.found for t in ticks), sum(t.payments for t in ticks), sum(t.refunds for t in ticks),
                    tuple(slug for t in ticks for slug in t.failed))

    async def run_network(self, network: Network, head: int | None) -> Tick:
        """One pass over one network at `head`, its newest announced block (None: unknown): find hashless payments,
        verify attempts, follow refunds."""
        self.watch.next_tick()
        loop = asyncio.get_running_loop()
        if not self.backoff.ready(network.slug, loop.time()) or (self.offset is not None and not self.offset.within):
            return Tick()
        try:
            found = await discovery.discover(self.watch, network, head)
            payments = await follow.payments(self.watch, network, head)
            refunds = await follow.refunds(self.watch, network, head)
        # Any error of a client library (HTTP status such as 429, RPC error, timeout, unreadable answer) is
        # this network's: it backs off while the family's other networks go on.
        except Exception as error:
            pause = self.backoff.failed(network.slug, loop.time())
            metrics.WATCHER_TICKS.labels(network.slug, "failed").inc()
            if isinstance(error, CODE_FAULTS):
                # Our bug, not the node's: it backs off all the same, but with its traceback for the on-call.
                log.exception("watch %s: a fault of the watcher's code; next try in %.1f s", network.slug, pause)
            else:
                _node_failed(network, error, self.backoff.failures[network.slug], pause)
            await self.watch.forget(network)
            return Tick(failed=(network.slug,))
        if self.backoff.failures.get(network.slug):
            log.info("watch %s: its node answers again, after %d failed passes", network.slug,
                        self.backoff.failures[network.slug])
        self.backoff.succeeded(network.slug)
        metrics.WATCHER_TICKS.labels(network.slug, "ok").inc()
        return Tick(found, payments, refunds)

    async def run(self, stop: asyncio.Event) -> None:
        """Pass over each network when its head moves (at most every min_pass_s) and at least every interval_s.
        A network's heads are followed from the pass that first opened its adapter: one nobody uses costs nothing."""
        heads, loop = self.heads, asyncio.get_running_loop()
        passed: dict[str, tuple[int | None, float]] = {}  # slug -> (head of its last pass, loop time of that pass)

        def due_in(slug: str) -> float:
            head, at = passed.get(slug, (None, -float("inf")))
            due = at + self.options.interval_s
            if heads.latest.get(slug) != head:
                due = min(due, at + self.options.min_pass_s)
            return due - loop.time()

        logs.announce(log, f"watch: {self.family}: a network is asked nothing until something on it needs it (quiet"
                           " until then), and a node that does not answer is one line")
        try:
            while not stop.is_set():
                heads.moved.clear()  # a head announced during the passes below sets it again: no move is lost
                for network in self.networks:
                    if due_in(network.slug) <= 0:
                        head = heads.latest.get(network.slug)
                        await self.run_network(network, head)
                        passed[network.slug] = (head, loop.time())
                        if self.watch.opened(network):
                            heads.follow(network, self._head_reader(network), self.options.interval_s)
                wait = min((due_in(network.slug) for network in self.networks), default=self.options.interval_s)
                await _first(stop, heads.moved, max(wait, 0.0))
        finally:
            await heads.close()

    def _head_reader(self, network: Network):
        async def read() -> int | None:
            if not self.backoff.ready(network.slug, asyncio.get_running_loop().time()):
                return None  # the network is backing off: its node is not asked meanwhile
            return await (await self.watch.adapter(network)).head()

        return read

    async def close(self) -> None:
        await self.heads.close()
        await self.watch.close()


async def _first(stop: asyncio.Event, moved: asyncio.Event, timeout: float) -> None:
    """Return when `stop` or `moved` is set, or after `timeout` seconds."""
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(moved.wait())]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()


async def serve(settings: Settings, family: str, stop: asyncio.Event) -> None:
    """The `service watch --family F` process: waits for PostgreSQL and Redis and for its family's lock, then
    watches until `stop`; standing by again whenever the lock's connection dies."""
    # The client libraries first: importing them takes seconds of CPU on a busy start, and done after the bus began
    # reading its replies, that stall outlasted the reads' socket timeout (a TimeoutError on every start).
    from chain_watchers.clients import open_adapter

    registry = load_registry()
    what = f"watch {family}"
    async with lifecycle.opened(settings, pool_max=3) as wired:
        consumer = f"watch-{family}-{socket.gethostname()}-{os.getpid()}"
        bus = CommandBus(wired.redis, wired.keys, consumer, settings.reply_timeout_s)
        await bus.start()
        try:
            async with wired.measured(what, stop) as offset:
                if offset is None:
                    return
                watcher = Watcher(family, registry, wired.pool, bus, open_adapter=open_adapter,
                                  options=WatchOptions.from_env(), offset=offset)

                async def watch() -> None:
                    logs.announce(log, f"watch: {family} watcher on {', '.join(n.slug for n in watcher.networks)}")
                    await watcher.run(stop)

                try:
                    await db.hold_lock(wired.pool, _LOCK + FAMILIES.index(family), stop, what, watch)
                finally:
                    await watcher.close()
        finally:
            await bus.stop()
