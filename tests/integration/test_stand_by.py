"""One process of a kind works (a chain family's watcher, the card refund sender) and a second stands by on its
advisory lock: it takes over when the first lets go, and gives up waiting when it is stopped."""

from __future__ import annotations

import asyncio

from common import db

LOCK = 7_204_999  # no process of the service uses it


async def test_a_second_process_stands_by_until_the_lock_is_free(pool) -> None:
    async with pool.acquire() as first, pool.acquire() as second:
        assert await db.stand_by_for_lock(first, LOCK, asyncio.Event()) is True
        waiting = asyncio.create_task(db.stand_by_for_lock(second, LOCK, asyncio.Event(), every_s=0.05))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # the first still holds it
        await first.execute("SELECT pg_advisory_unlock($1)", LOCK)
        assert await asyncio.wait_for(waiting, 5) is True
        await second.execute("SELECT pg_advisory_unlock($1)", LOCK)


async def test_a_stop_ends_the_wait_without_the_lock(pool) -> None:
    async with pool.acquire() as first, pool.acquire() as second:
        assert await db.stand_by_for_lock(first, LOCK, asyncio.Event()) is True
        stop = asyncio.Event()
        waiting = asyncio.create_task(db.stand_by_for_lock(second, LOCK, stop))
        await asyncio.sleep(0.1)
        stop.set()
        assert await asyncio.wait_for(waiting, 5) is False
        await first.execute("SELECT pg_advisory_unlock($1)", LOCK)
