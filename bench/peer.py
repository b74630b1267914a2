"""The conventional rival of the pipeline: the same API doing the same work in one transaction per request.

What a careful team would build without streams and actors. It is the service's own web application (the same
routes, signature check against the stored encrypted key, rate limit, Idempotency-Key handling and answer bodies)
with the command bus swapped for `DirectBus`: each request spends its signature in Redis (SET NX EX) and then
decides its command against the order's stored state and writes, in one PostgreSQL statement of its own (one
transaction, one round trip), the rows the actors write for it: events, order and session rows, the command's
dedupe row and the outbox row. The order number is handed out by the statement that also looks the command up
in the dedupe table, outside that transaction, as the actors do: a per-merchant counter locked until the
request's commit would make every request of one merchant wait on the one before it.

Two orders of the same request never meet, but two commands on one order may run at once here (an actor runs
them one after the other): the second to commit breaks the events table's (order_id, seq) key, and is decided
again against the state the first one wrote (optimistic concurrency).

    python bench/peer.py --port 8091   # DATABASE_URL, REDIS_URL, REDIS_PREFIX, SERVICE_MASTER_KEY as for `service web`
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from datetime import timedelta
from pathlib import Path

import asyncpg
import msgspec
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actors import batch, store
from actors import messages as m
from actors.runtime import publication
from common import config, db
from common.clock import utcnow
from streams.names import Keys
from streams.pipeliner import Pipeliner
from streams.producer import SignatureSpent
from web.app import init_app
from web.context import CONTEXT

log = logging.getLogger("peer")
_decode_reply = msgspec.json.Decoder(m.Reply).decode
ATTEMPTS = 5  # a command that keeps losing its order to concurrent ones is answered as a passing failure
SWEEP_EVERY_S = 1.0


class DirectBus:
    """The command bus's `ask`, answered by the request itself: decide, commit, publish, reply."""

    def __init__(self, pool: asyncpg.Pool, pipeliner: Pipeliner, keys: Keys):
        self.pool = pool
        self.pipeliner = pipeliner  # the rate limit, the replay guard and the events stream share its round trips
        self.keys = keys
        # Requests whose events are on the stream: their outbox rows go with a later request's commit, as a lane's
        # go with its next batch, or with the sweep when no request comes.
        self.published: list[str] = []
        self._sweeper: asyncio.Task | None = None

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.pipeliner.stop()

    async def ask(self, envelope: m.Envelope, signature: str | None = None, signature_ttl_s: int = 0) -> m.Reply:
        if signature is not None and not await self.pipeliner.call(
                "SET", self.keys.signature_seen(signature), "1", "NX", "EX", signature_ttl_s):
            raise SignatureSpent(signature)
        for _ in range(ATTEMPTS):
            try:
                outcome = await self._apply(envelope)
            except asyncpg.UniqueViolationError:  # another command on this order committed first: decide again
                continue
            if outcome.appended:
                await self.pipeliner.call_many(publication(self.keys, [(a.payload, envelope.request_id)
                                                                      for a in outcome.appended]))
                self.published.append(outcome.appended[0].event_id)
            return _decode_reply(outcome.reply)
        return _decode_reply(batch.failed(envelope, for_its_content=False).reply)

    async def _apply(self, envelope: m.Envelope) -> store.Outcome:
        published, self.published = self.published, []
        try:
            async with self.pool.acquire() as conn:
                outcome = await decide_and_commit(conn, envelope, published)
        except BaseException:
            self.published += published  # the statement that would have dropped them did not commit
            raise
        if outcome is None:
            self.published += published
            return batch.internal_error(envelope)
        return outcome

    async def _sweep(self) -> None:
        """Drop the outbox rows of published requests when no request came to take them, and publish what a
        crash left in the outbox, as the actors' sweep does."""
        while True:
            await asyncio.sleep(SWEEP_EVERY_S)
            try:
                async with self.pool.acquire() as conn:
                    if self.published:
                        await store.drop_outbox(conn, self.published[:])
                        self.published.clear()
                    async with conn.transaction():
                        rows = await store.pending_outbox(conn, utcnow() - timedelta(seconds=5), 1000)
                        if rows:
                            payloads = [(p, "") for _batch_id, ps in rows for p in ps]  # the outbox keeps no request id
                            await self.pipeliner.call_many(publication(self.keys, payloads))
                            await store.drop_outbox(conn, [batch_id for batch_id, _ in rows])
            except Exception:
                log.exception("outbox sweep failed; trying again")


async def decide_and_commit(conn: asyncpg.Connection, envelope: m.Envelope,
                            published: list[str]) -> store.Outcome | None:
    """One command decided against its order's stored state and committed, with the outbox rows `published` names,
    as the actors do with a batch of one; None when it breaks an invariant of the core (nothing is written)."""
    prepared = await store.prepare(conn, batch.wanted([envelope], {}))
    decided = batch.decide_batch([envelope], prepared, prepared.orders)
    if decided.broken:
        return None
    if decided.fresh or published:
        await store.commit(conn, decided.fresh, decided.changed, decided.encoded, decided.views, published,
                           prepared.orders)
    return decided.outcomes[0]


def init_peer(settings: config.Settings, pool_size: int) -> web.Application:
    app = init_app(settings)

    async def direct(app: web.Application):
        c = app[CONTEXT]
        await c.bus.stop()  # the stream bus: its reply reader has nothing to read here
        pool = await db.connect(settings.database_url, min_size=pool_size, max_size=pool_size,
                                server_settings=db.ACTOR_SETTINGS)
        c.bus = DirectBus(pool, Pipeliner(c.redis), c.keys)
        await c.bus.start()
        yield
        await c.bus.stop()
        await pool.close()

    app.cleanup_ctx.append(direct)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--pool", type=int, default=int(os.environ.get("PEER_POOL", "16")),
                        help="PostgreSQL connections of the process")
    args = parser.parse_args()
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "WARNING"))
    settings = config.load(port=args.port)
    web.run_app(init_peer(settings, args.pool), host="127.0.0.1", port=args.port, print=None, reuse_port=True,
                access_log=None)


if __name__ == "__main__":
    main()
