"""A lean Redis connection for the hot paths: commands packed by hand, replies parsed in C by hiredis.

redis-py opens the connection, so authentication, database selection, TLS and UNIX sockets work as
configured; after that this speaks RESP2 on the connection's streams itself. redis-py's per-reply
path (a timeout context, response callbacks, retry wrappers) cost more than the work it wrapped:
here every reply that one read brings in is parsed in one go.
"""

from __future__ import annotations

import asyncio
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

READ_SIZE = 1 << 16


def pack(commands: list[tuple]) -> bytes:
    """Commands in RESP2 framing; arguments are bytes, str or int."""
    out: list[bytes] = []
    for args in commands:
        out.append(b"*%d\r\n" % len(args))
        for arg in args:
            if isinstance(arg, str):
                arg = arg.encode()
            elif isinstance(arg, int):
                arg = b"%d" % arg
            out.append(b"$%d\r\n%b\r\n" % (len(arg), arg))
    return b"".join(out)


class RespConnection:
    """One connection, written and read by its owner; error replies come back as ResponseError objects."""

    def __init__(self, redis: aioredis.Redis):
        self._redis = redis
        self._conn = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._parser = hiredis.Reader(replyError=ResponseError)

    async def open(self) -> None:
        self._conn = self._redis.connection_pool.make_connection()
        await self._conn.connect()
        # redis-py has read nothing it has not parsed: from here on its streams are ours alone.
        self._reader, self._writer = self._conn._reader, self._conn._writer
        self._parser = hiredis.Reader(replyError=ResponseError)

    async def close(self) -> None:
        conn, self._conn, self._reader, self._writer = self._conn, None, None, None
        if conn is not None:
            await conn.disconnect()

    async def send(self, commands: list[tuple]) -> None:
        """Write commands; a connection not open yet (or closed after an error) opens first."""
        if self._writer is None:
            await self.open()
        self._writer.write(pack(commands))
        await self._writer.drain()

    async def replies(self) -> list[Any]:
        """Every reply that has arrived, waiting for at least one."""
        while True:
            found = []
            reply = self._parser.gets()
            while reply is not False:
                found.append(reply)
                reply = self._parser.gets()
            if found:
                return found
            data = await self._reader.read(READ_SIZE) if self._reader is not None else b""
            if not data:
                await self.close()  # the next send opens a new one
                raise RedisConnectionError("Redis closed the connection")
            self._parser.feed(data)

    async def call(self, *args: Any) -> Any:
        """One command and its reply, on a connection that nobody else is using; an error reply is raised."""
        await self.send([args])
        [reply] = await self.replies()
        if isinstance(reply, ResponseError):
            raise reply
        return reply


def stream_entries(reply: Any) -> list[tuple[str, bytes, dict[bytes, bytes]]]:
    """(stream, entry id, fields) of an XREAD or XREADGROUP reply, in order (RESP3 sends a map of streams,
    RESP2 a list of pairs: the connection speaks whichever redis-py negotiated)."""
    entries = []
    for stream, found in reply.items() if isinstance(reply, dict) else reply or ():
        name = stream.decode()
        for entry_id, fields in found:
            entries.append((name, entry_id, dict(zip(fields[::2], fields[1::2])) if fields else {}))
    return entries
