"""An export file as the service streams it (`client.exports.orders(...)`): read once, as byte chunks, lines or typed
rows, or saved to a file; the synchronous and the asyncio form. Errors come before the file starts (the call raises
the ApiError); a file cut off on the way raises ConnectionFailed, never a silently short read."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx

from .errors import ConnectionFailed, ServiceError
from .models import ApiObject, ResponseInfo
from .operations import Op
from .rows import LineSplitter, RowDecoder, file_format, filename


class _File:
    """What the sync and async forms share: the answer's headers read into attributes, and the one-read rule."""

    def __init__(self, op: Op, answer: httpx.Response, info: ResponseInfo):
        self._op, self._answer, self.response = op, answer, info
        self._where = f"{op.resource}.{op.name}"
        self.content_type = answer.headers.get("content-type", "")
        self.format = file_format(self.content_type, self._where)  # "csv" or "jsonl"
        self.filename = filename(answer.headers.get("content-disposition"))
        self._read = False

    def _start(self) -> None:
        if self._read:
            raise ServiceError(f"{self._where}: a download is read once; call the method again for another copy")
        self._read = True

    def _cut_off(self, exc: Exception, received: int) -> ConnectionFailed:
        return ConnectionFailed(f"{self._where}: the file was cut off after {received} bytes "
                                f"({type(exc).__name__}: {exc}); call again for the whole file")

    def _rows(self) -> RowDecoder:
        return RowDecoder(self._op.returns, self.format, self._where)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.filename or self._where} ({self.format})>"


def _part(path: str | os.PathLike) -> tuple[Path, Path]:
    """The file and the name it is written under until complete: a cut-off export never looks like a whole one."""
    target = Path(path)
    return target, target.with_name(target.name + ".part")


class Download(_File):
    """An export file of the synchronous client. Iterate one of `iter_bytes()`, `iter_lines()`, `rows()`, or
    `save(path)`; reading to the end closes the connection, and `with` closes it when you stop early."""

    def __enter__(self) -> Download:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._answer.close()

    def iter_bytes(self) -> Iterator[bytes]:
        """The file's bytes, a chunk at a time as they arrive."""
        self._start()
        received = 0
        try:
            for chunk in self._answer.iter_bytes():
                received += len(chunk)
                yield chunk
        except httpx.TransportError as exc:
            raise self._cut_off(exc, received) from exc
        finally:
            self.close()

    def _raw_lines(self) -> Iterator[str]:
        splitter = LineSplitter()
        for chunk in self.iter_bytes():
            yield from splitter.feed(chunk)
        yield from splitter.end()

    def iter_lines(self) -> Iterator[str]:
        """The file's text lines, without their line ends (a CSV cell may span lines: `rows()` reads records)."""
        return (line.removesuffix("\r") for line in self._raw_lines())

    def rows(self) -> Iterator[ApiObject]:
        """Each row as its model (`OrderExportRow`, `PaymentExportRow`, `RefundExportRow`), the header skipped."""
        decoder = self._rows()
        for line in self._raw_lines():
            row = decoder.feed(line)
            if row is not None:
                yield row
        decoder.end()

    def save(self, path: str | os.PathLike) -> int:
        """Writes the file to `path` as it arrives and returns its size in bytes; the file appears under its name
        only once complete (it is `path.part` until then, removed if the transfer fails)."""
        target, part = _part(path)
        size = 0
        try:
            with open(part, "wb") as out:
                for chunk in self.iter_bytes():
                    size += out.write(chunk)
            part.replace(target)
        finally:
            part.unlink(missing_ok=True)
        return size


class AsyncDownload(_File):
    """An export file of the asyncio client: the same methods, as async iterators (`async for row in
    download.rows()`) and `await download.save(path)`; `async with` closes it when you stop early."""

    async def __aenter__(self) -> AsyncDownload:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._answer.aclose()

    async def iter_bytes(self) -> AsyncIterator[bytes]:
        self._start()
        received = 0
        try:
            async for chunk in self._answer.aiter_bytes():
                received += len(chunk)
                yield chunk
        except httpx.TransportError as exc:
            raise self._cut_off(exc, received) from exc
        finally:
            await self.aclose()

    async def _raw_lines(self) -> AsyncIterator[str]:
        splitter = LineSplitter()
        async for chunk in self.iter_bytes():
            for line in splitter.feed(chunk):
                yield line
        for line in splitter.end():
            yield line

    async def iter_lines(self) -> AsyncIterator[str]:
        async for line in self._raw_lines():
            yield line.removesuffix("\r")

    async def rows(self) -> AsyncIterator[ApiObject]:
        decoder = self._rows()
        async for line in self._raw_lines():
            row = decoder.feed(line)
            if row is not None:
                yield row
        decoder.end()

    async def save(self, path: str | os.PathLike) -> int:
        """As Download.save; the chunks (64 KiB at most from the service) are written as they come."""
        target, part = _part(path)
        size = 0
        try:
            with open(part, "wb") as out:
                async for chunk in self.iter_bytes():
                    size += out.write(chunk)
            part.replace(target)
        finally:
            part.unlink(missing_ok=True)
        return size
