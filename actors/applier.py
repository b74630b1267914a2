"""Applying a batch's commands: decided on the orders the worker holds, or on what PostgreSQL holds, and committed
in one statement that first checks the batch's lease epochs (actors/fencing.py). Shared by a
worker's lanes, with the orders it holds (a cache) and its order numbers."""

from __future__ import annotations

import logging
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable

import asyncpg

from actors import batch, store
from actors import messages as m
from actors.command_entries import Failure, log_ids
from actors.fencing import Fenced
from actors.group_commit import GroupCommit
from actors.numbers import NumberBlocks
from actors.order import Order
from actors.outcomes import Outcome, Prepared
from common import faults, metrics

log = logging.getLogger(__name__)
CACHE_SIZE = 50_000
_AT_ONCE, _PREPARED, _AGAIN = (metrics.BATCHES.labels(how) for how in ("at_once", "prepared", "decided_again"))


class BatchHooks:
    """The moments of a batch's commit. They do nothing here; the crash tests subclass them to kill the worker
    at each moment, as a kill -9 would (tests/support/crashing.py)."""

    def before_commit(self) -> None:
        pass

    async def commit(self, statement: Awaitable) -> None:
        await statement

    def after_commit(self) -> None:
        pass


class Applier:
    def __init__(self, scope: str, hooks: BatchHooks | None = None, numbers: NumberBlocks | None = None) -> None:
        self.hooks = hooks or BatchHooks()
        self.numbers = numbers or NumberBlocks()
        self.cache: OrderedDict[str, Order] = OrderedDict()  # the orders as committed, least recently used first
        self.group = GroupCommit(self.hooks, scope)  # the lanes' batches, committed together

    def forget(self, moved: Callable[[str], bool]) -> None:
        """Drop the orders of partitions that changed hands: another worker may have written them meanwhile."""
        for order_id in [o for o in self.cache if moved(o)]:
            del self.cache[order_id]

    async def apply(self, conn: asyncpg.Connection, envelopes: list[m.Envelope], published: list[str],
                    fences: set[tuple[int, int]]) -> list[Outcome | Failure]:
        """`fences` are the (partition, lease epoch) the batch was read under: it commits only while PostgreSQL
        knows no newer epoch of any of them (actors/fencing.py), and raises Fenced otherwise."""
        # The batch decides on the orders it found cached before its first await: a lease change or another
        # lane's batch may drop them from the cache meanwhile, and an order neither cached nor read would be
        # answered order_not_found.
        held = {order_id: self.cache[order_id] for order_id in {e.command.order_id for e in envelopes}
                if order_id in self.cache}
        needed = batch.creations(envelopes)
        self.numbers.note(needed)
        if self._nothing_to_read(envelopes, held, needed):
            # Every order is held or new, and new ones have their numbers. A command recorded before (a retry) or
            # a new order that exists after all makes the commit fail on its unique key, and the batch is decided
            # again against what PostgreSQL holds.
            try:
                nothing_read = Prepared({}, {}, {}, {})
                outcomes = await self._decide_and_commit(conn, envelopes, nothing_read, held, published, fences)
                _AT_ONCE.inc()
                return outcomes
            except asyncpg.UniqueViolationError:
                _AGAIN.inc()
        prepared = await store.prepare(conn, batch.wanted(envelopes, held, self.numbers))
        for order in prepared.orders.values():
            self._remember(order)
        _PREPARED.inc()
        return await self._decide_and_commit(conn, envelopes, prepared, held | prepared.orders, published, fences)

    async def apply_alone(self, conn: asyncpg.Connection, env: m.Envelope,
                          fences: set[tuple[int, int]]) -> Outcome | Failure:
        self.cache.pop(env.command.order_id, None)
        try:
            [outcome] = await self.apply(conn, [env], [], fences)
            return outcome
        except (*faults.UNAVAILABLE, Fenced):
            raise
        except asyncpg.PostgresError as exc:
            log.error("command %s refused by the database: %s", env.command_id, exc, extra=log_ids(env))
            # Class 22 (data exception: NUL in text, a number out of range) and check violations are about the
            # command's content; anything else may pass.
            return batch.failed(env, isinstance(exc, (asyncpg.DataError, asyncpg.CheckViolationError)))
        except Exception as exc:
            log.exception("command %s raised in the core", env.command_id, extra=log_ids(env))
            return Failure(f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc, limit=-8)),
                           retry=True)

    def _nothing_to_read(self, envelopes: list[m.Envelope], held: dict[str, Order], needed: dict) -> bool:
        """Whether the batch can be decided on what the worker holds: each command creates an order under a number
        the worker holds or acts on an order it holds (as committed: its partitions are its own), and none needs
        a lookup of its own (a posted refund transfer's claim, a repeated signature's recorded answer)."""
        return (all(e.command.order_id in held or batch.needs_number(e.command) for e in envelopes)
                and self.numbers.covers(needed)
                and not any(e.recorded_only or isinstance(e.command, m.SubmitRefundTx) for e in envelopes))

    async def _decide_and_commit(self, conn: asyncpg.Connection, envelopes: list[m.Envelope], prepared: Prepared,
                                 found: dict[str, Order], published: list[str],
                                 fences: set[tuple[int, int]]) -> list[Outcome | Failure]:
        decided = batch.decide_batch(envelopes, prepared, found, self.numbers)
        self.hooks.before_commit()
        try:
            await self.group.commit(conn, store.batch_rows(decided.fresh, decided.changed, decided.encoded, published,
                                                           found), fences)
        except BaseException as exc:
            for order_id in decided.changed:
                self.cache.pop(order_id, None)
            if isinstance(exc, faults.MACHINE) or (isinstance(exc, (asyncpg.PostgresError, Fenced))
                                                   and not isinstance(exc, faults.UNAVAILABLE)):
                # PostgreSQL refused the statement, so none of its orders was stored: their numbers go to the next
                # new orders. After a lost connection the commit may have happened, and they are not reused.
                for key, number in decided.numbered:
                    self.numbers.give_back(key, number)
            raise
        for order in decided.changed.values():
            self._remember(order)
        if not decided.broken:
            return decided.outcomes
        return [Failure(f"{decided.broken[o.command_id].code}: {decided.broken[o.command_id].message}")
                if o.command_id in decided.broken else o for o in decided.outcomes]

    def _remember(self, order: Order) -> None:
        self.cache[order.order_id] = order
        self.cache.move_to_end(order.order_id)
        if len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

