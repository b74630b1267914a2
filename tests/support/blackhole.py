"""A TCP proxy of a test's own between one process and a server, that can stop forwarding without closing
anything: the process's connections stay open and new ones are accepted, but no byte passes either way until it
heals, as when a network path silently drops packets. What was sent meanwhile is delivered when it heals."""

from __future__ import annotations

import asyncio
import contextlib

from tests.support.ports import free_port


class Blackhole:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = free_port()
        self._open = asyncio.Event()
        self._open.set()
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task] = set()

    async def __aenter__(self) -> Blackhole:
        self._server = await asyncio.start_server(self._connected, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc) -> None:
        self._server.close()
        for task in self._pumps:
            task.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)

    def cut(self) -> None:
        self._open.clear()

    def heal(self) -> None:
        self._open.set()

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(source, sink))
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while True:
                await self._open.wait()  # cut: nothing is read, so nothing is forwarded, and the socket stays open
                data = await source.read(65536)
                await self._open.wait()  # what was read as the cut began waits for the heal
                if not data:
                    break
                sink.write(data)
                await sink.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                sink.close()
