"""Runs the Redis commands of concurrent callers in redis-py pipelines, written together.

Commands queued while a pipeline is in flight go out in the next one: a burst of requests costs one
round trip instead of one per command, and a few connections serve however many requests are in
flight. The pipelines run in tasks of the pipeliner's own, never in a caller's: a caller that gives
up (a timeout, a cancelled request) leaves its command to finish, and its reply is dropped, so no
connection is ever left with an unread reply that the next command would take for its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from redis.exceptions import NoScriptError, RedisError

from streams.connection import Client

log = logging.getLogger(__name__)
IN_FLIGHT = 2  # pipelines at once: one being answered while the next is written


class Script:
    """A Lua script, run by its digest: its text would cost more bytes than the rest of each call."""

    def __init__(self, text: str):
        self.text = text
        self.sha = hashlib.sha1(text.encode()).hexdigest()


class Pipeliner:
    def __init__(self, redis: Client):
        self.redis = redis
        self._queue: list[tuple[tuple, asyncio.Future]] = []
        self._running: set[asyncio.Task] = set()
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop the pipeliner serves, found once: asking for the running loop costs a getpid() system call on
        each call (CPython 3.11), several a request."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    async def stop(self) -> None:
        self._stopping = True
        if self._running:
            await asyncio.wait(self._running)
        self._fail(self._queue, ConnectionError("the command pipeliner stopped"))
        self._queue = []

    async def call(self, *args: Any) -> Any:
        """The command's reply; an error reply is raised."""
        [done] = self._enqueue([args])
        return await done

    async def run(self, script: Script, *args: Any) -> Any:
        """The script's reply; its text is sent only when the server does not know it yet (a restarted Redis, a
        node that never ran it)."""
        try:
            return await self.call("EVALSHA", script.sha, *args)
        except NoScriptError:
            return await self.call("EVAL", script.text, *args)

    async def call_many(self, commands: list[tuple]) -> list[Any]:
        """The replies of several commands, sent together and in this order."""
        return await asyncio.gather(*self._enqueue(commands))

    def _enqueue(self, commands: list[tuple]) -> list[asyncio.Future]:
        if self._stopping:
            raise ConnectionError("the command pipeliner stopped")
        loop = self.loop
        waiting = [loop.create_future() for _ in commands]
        self._queue += zip(commands, waiting)
        self._launch()
        return waiting

    def _launch(self) -> None:
        if self._queue and len(self._running) < IN_FLIGHT:
            batch, self._queue = self._queue, []
            task = self.loop.create_task(self._send(batch))
            self._running.add(task)
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task) -> None:
        self._running.discard(task)
        if not self._stopping:
            self._launch()

    async def _send(self, batch: list[tuple[tuple, asyncio.Future]]) -> None:
        pipe = self.redis.pipeline(transaction=False)
        for args, _ in batch:
            pipe.execute_command(*args)
        try:
            results = await pipe.execute(raise_on_error=False)
        except Exception as exc:  # Redis unreachable: every caller of this batch learns it
            if not isinstance(exc, (RedisError, OSError)):
                log.exception("command pipeline failed")
            self._fail(batch, exc)
            return
        for (_, done), result in zip(batch, results):
            if done.done():  # its caller gave up
                continue
            if isinstance(result, Exception):  # one caller's error is its own
                done.set_exception(result)
            else:
                done.set_result(result)

    @staticmethod
    def _fail(batch: list[tuple[tuple, asyncio.Future]], exc: Exception) -> None:
        for _, done in batch:
            if not done.done():
                done.set_exception(exc)
