"""What every step of a watcher shares: the pool, the command bus, the options, this tick's time and lazy adapters."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Protocol

import asyncpg
import msgspec

from actors import messages as m
from chain_watchers.base import ChainAdapter
from chain_watchers.registry import Network
from common.clock import Clock, utcnow

log = logging.getLogger(__name__)
AdapterFactory = Callable[[Network], Awaitable[ChainAdapter]]


class WatchOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Tuning of one watcher process; every field can be set from the environment (WATCH_<FIELD>)."""

    interval_s: float = 3.0  # longest pause between passes over a network, whatever its heads do
    # A transaction in a block is checked again when the head reaches the height that completes its depth; this is
    # the net under that rule (a head that stopped moving, a family without heights), not the usual path.
    recheck_s: float = 30.0
    head_poll_s: float = 1.0  # the fastest a network without a subscription has its head read
    min_pass_s: float = 0.5  # the fastest one network is passed over, however fast its heads come
    batch: int = 100  # transactions checked per network and tick
    not_found_after_s: float = 1800.0  # a hash no node knows this long (since posted, or since it left a block) fails
    backoff_base_s: float = 1.0  # first pause of a network whose RPC failed; doubles per failure
    backoff_max_s: float = 300.0
    scan_chunk: int = 2000  # EVM blocks per eth_getLogs (providers cap the range)
    scan_chunks: int = 5  # eth_getLogs calls per network and tick, so a long catch-up shares the process
    first_lookback: int = 1000  # blocks read back on a network's first scan, before any cursor exists
    tron_blocks: int = 50  # TRON blocks read per tick (one request each)
    late_every: int = 20  # ended sessions are searched (reference, comment) one tick in this many

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WatchOptions:
        env = os.environ if env is None else env
        raw = {name: env[f"WATCH_{name.upper()}"] for name in cls.__struct_fields__ if f"WATCH_{name.upper()}" in env}
        return msgspec.convert(raw, cls, strict=False)


class Bus(Protocol):
    """The part of streams.producer.CommandBus a watcher uses."""

    async def ask(self, envelope: m.Envelope) -> m.Reply: ...


class Watch:
    def __init__(self, pool: asyncpg.Pool, bus: Bus, open_adapter: AdapterFactory, options: WatchOptions,
                 clock: Clock = utcnow) -> None:
        self.pool, self.bus, self.options, self.clock = pool, bus, options, clock
        self._open_adapter = open_adapter
        self._adapters: dict[str, ChainAdapter] = {}
        self.now: datetime = clock()
        self.tick = 0

    @property
    def recheck(self) -> timedelta:
        return timedelta(seconds=self.options.recheck_s)

    @property
    def not_found_after(self) -> timedelta:
        return timedelta(seconds=self.options.not_found_after_s)

    def next_tick(self) -> None:
        # One time per tick: every verdict and command of the tick agrees on it, and tests can move it.
        self.now = self.clock()
        self.tick += 1

    async def adapter(self, network: Network) -> ChainAdapter:
        """Opened on first need, so a network nobody uses costs no connection."""
        if network.slug not in self._adapters:
            self._adapters[network.slug] = await self._open_adapter(network)
        return self._adapters[network.slug]

    def opened(self, network: Network) -> bool:
        """Whether some pass needed the network's node (only then are its heads worth following)."""
        return network.slug in self._adapters

    async def tell(self, command_id: str, command: m.Command) -> m.Reply:
        """Send a command to its order's actor and wait for the answer (a resent id is answered from the record)."""
        reply = await self.bus.ask(m.Envelope(command_id=command_id, command=command))
        if not reply.ok:
            log.warning("%s refused %s: %s", command.order_id, command_id, reply.error)
        return reply

    async def forget(self, network: Network) -> None:
        """Drop a network's adapter after a failure: the next use opens a fresh connection."""
        adapter = self._adapters.pop(network.slug, None)
        if adapter is not None:
            try:
                await adapter.close()
            except Exception:  # the connection is being thrown away; a failure to close it changes nothing
                log.debug("closing the %s adapter failed", network.slug, exc_info=True)

    async def close(self) -> None:
        for slug in list(self._adapters):
            await self.forget(self._adapters[slug].network)
