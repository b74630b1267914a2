"""Runs the Redis commands of concurrent callers together: one pipeline per flush.

A burst of requests then costs one round trip to Redis instead of one per command, and stays
under the connection pool's limit however many requests are in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import redis.asyncio as aioredis


class Pipeliner:
    # Flushes in flight at once: a caller never waits for another batch's round trip to finish.
    CONCURRENT_FLUSHES = 8

    def __init__(self, redis: aioredis.Redis):
        self.redis = redis
        self._queue: list[tuple[tuple, asyncio.Future]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._slots = asyncio.Semaphore(self.CONCURRENT_FLUSHES)
        self._flushes: set[asyncio.Task] = set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._flush_loop())

    async def stop(self) -> None:
        for task in [self._task, *self._flushes]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def call(self, *args: Any) -> Any:
        done: asyncio.Future = asyncio.get_running_loop().create_future()
        self._queue.append((args, done))
        self._wake.set()
        return await done

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self._slots.acquire()
            batch, self._queue = self._queue, []
            if not batch:
                self._slots.release()
                continue
            flush = asyncio.create_task(self._flush(batch))
            self._flushes.add(flush)
            flush.add_done_callback(self._flushes.discard)

    async def _flush(self, batch: list[tuple[tuple, asyncio.Future]]) -> None:
        try:
            results = await self._execute([args for args, _ in batch])
        finally:
            self._slots.release()
        for (_, done), result in zip(batch, results):
            if done.done():
                continue
            if isinstance(result, Exception):
                done.set_exception(result)
            else:
                done.set_result(result)

    async def _execute(self, commands: list[tuple]) -> list[Any]:
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for args in commands:
                    pipe.execute_command(*args)
                return await pipe.execute(raise_on_error=False)
        except Exception as exc:  # Redis unreachable: every caller in the batch learns it
            return [exc] * len(commands)
