"""Runs the Redis commands of concurrent callers over one connection of its own, written together.

Commands queued while the writer was busy go out in one write; Redis answers in the same order,
and each reply answers its caller as soon as it arrives. A burst of requests then costs one
write instead of one round trip per command, with no pipeline object, pool checkout or task per
batch, and stays within one connection however many requests are in flight.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from streams.resp import RespConnection

log = logging.getLogger(__name__)
RECONNECT_DELAY_S = 0.1


class Pipeliner:
    def __init__(self, redis: aioredis.Redis):
        self.redis = redis
        self._queue: list[tuple[tuple, asyncio.Future]] = []
        self._sent: deque[asyncio.Future] = deque()  # written, answered in this order
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._stopping = False

    async def stop(self) -> None:
        # By flag, not by cancelling: the loop ends between writes, closes its connection itself, and every
        # caller still waiting learns it below.
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await self._task
        self._fail(ConnectionError("the command pipeliner stopped"))

    async def call(self, *args: Any) -> Any:
        """The command's raw reply (no redis-py response callbacks); an error reply is raised."""
        [done] = self._enqueue([args])
        return await done

    async def call_many(self, commands: list[tuple]) -> list[Any]:
        """The raw replies of several commands, written together and in this order."""
        return await asyncio.gather(*self._enqueue(commands))

    def _enqueue(self, commands: list[tuple]) -> list[asyncio.Future]:
        if self._task is None:  # connects on first use
            self._task = asyncio.create_task(self._run())
        loop = asyncio.get_running_loop()
        waiting = [loop.create_future() for _ in commands]
        self._queue += zip(commands, waiting)
        self._wake.set()
        return waiting

    async def _run(self) -> None:
        while not self._stopping:
            conn = RespConnection(self.redis)
            reader: asyncio.Task | None = None
            try:
                await conn.open()
                reader = asyncio.create_task(self._read(conn))
                await self._write(conn, reader)
            except Exception as exc:  # Redis unreachable, or a reply out of step: every caller waiting learns it
                if not isinstance(exc, (RedisError, OSError)):
                    log.exception("command pipeline broken; reconnecting")
                self._fail(exc)
                await asyncio.sleep(RECONNECT_DELAY_S)
            finally:
                await conn.close()
                if reader is not None:
                    reader.cancel()
                    await asyncio.wait({reader}, timeout=1)

    async def _write(self, conn: RespConnection, reader: asyncio.Task) -> None:
        while not self._stopping:
            await self._wake.wait()
            self._wake.clear()
            if reader.done():
                reader.result()  # the connection broke under the reader: raise its error here
            batch, self._queue = self._queue, []
            if batch:
                self._sent.extend(done for _, done in batch)
                await conn.send([args for args, _ in batch])

    async def _read(self, conn: RespConnection) -> None:
        try:
            while True:
                for result in await conn.replies():
                    done = self._sent.popleft()
                    if done.done():
                        continue
                    if isinstance(result, ResponseError):  # one caller's error is its own
                        done.set_exception(result)
                    else:
                        done.set_result(result)
        finally:
            self._wake.set()  # let the writer find out, and reconnect

    def _fail(self, exc: BaseException) -> None:
        waiting = list(self._sent) + [done for _, done in self._queue]
        self._sent.clear()
        self._queue = []
        for done in waiting:
            if not done.done():
                done.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
