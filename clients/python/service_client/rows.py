"""Reading an export file as it arrives (pure, no I/O): bytes into lines, lines into typed rows. The synchronous and
the asyncio downloads (downloads.py) both feed these, a chunk at a time, so a file of any size is never held whole."""

from __future__ import annotations

import codecs
import csv
import json
import re
import typing
from typing import Any

from .errors import DecodeError
from .models import ApiObject

FORMATS = {"text/csv": "csv", "application/x-ndjson": "jsonl"}
_FILENAME = re.compile(r'filename="([^"]+)"')


def file_format(content_type: str, where: str) -> str:
    """`csv` or `jsonl` from the answer's Content-Type; anything else is not an export this library can read."""
    media = content_type.split(";")[0].strip().lower()
    if media not in FORMATS:
        raise DecodeError(f"{where}: answered {content_type or 'no content type'}, not a CSV or JSON Lines file")
    return FORMATS[media]


def filename(content_disposition: str | None) -> str | None:
    """The name the service gives the file (`orders-test-20260301T000000Z-now.csv`)."""
    found = _FILENAME.search(content_disposition or "")
    return found.group(1) if found else None


class LineSplitter:
    """Byte chunks to text lines, split on "\\n" only: a JSON string may hold U+2028 or a lone "\\r" but never a raw
    "\\n", and a UTF-8 character cut between two chunks is decoded whole. Each line keeps its "\\r" (CSV's CRLF), so
    a CSV cell that spans lines is read back exactly."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._pending = ""

    def feed(self, chunk: bytes) -> list[str]:
        try:
            text = self._pending + self._decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise DecodeError(f"an export file that is not UTF-8: {exc}") from exc
        *lines, self._pending = text.split("\n")
        return lines

    def end(self) -> list[str]:
        """The last line, when the file does not end with a line end."""
        try:
            text = self._pending + self._decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            raise DecodeError(f"an export file that ends inside a UTF-8 character: {exc}") from exc
        self._pending = ""
        return [text] if text else []


class RowDecoder:
    """Lines of one export file to rows of its model. JSON Lines: one object a line, values as stored. CSV: the
    header row names the cells; a record ends at a line end outside quotes (every cell is quoted, a quote inside one
    doubled, so an even count of quotes so far means the record is complete); an empty cell is None where the
    column may be absent, `true`/`false` are booleans where the column is one; other cells stay text as the file
    has them, the spreadsheet guard's leading `'` included (docs/api.md, Exports)."""

    def __init__(self, model: type[ApiObject], fmt: str, where: str):
        self._model, self._fmt, self._where = model, fmt, where
        self._header: list[str] | None = None
        self._parts: list[str] = []
        self._quotes = 0
        self._count = 0

    def feed(self, line: str) -> ApiObject | None:
        """The row this line completes, or None (a header, a blank line, a record still open)."""
        if self._fmt == "jsonl":
            return self._json_row(line) if line.strip() else None
        self._parts.append(line)
        self._quotes += line.count('"')
        if self._quotes % 2:
            return None
        record = "\n".join(self._parts)
        self._parts, self._quotes = [], 0
        record = record[:-1] if record.endswith("\r") else record
        if not record:
            return None
        cells = next(csv.reader([record]))
        if self._header is None:
            self._header = cells
            return None
        if len(cells) != len(self._header):
            raise DecodeError(f"{self._where}: CSV record {self._count + 1} has {len(cells)} cells, "
                              f"the header {len(self._header)}")
        return self._row(dict(zip(self._header, (_cell(c, self._model._types.get(h)) for h, c in
                                                  zip(self._header, cells)))))

    def end(self) -> None:
        """At the end of the file: a record left open means the file was cut inside a quoted cell."""
        if self._parts and "".join(self._parts).strip():
            raise DecodeError(f"{self._where}: the file ends inside a quoted CSV cell")

    def _json_row(self, line: str) -> ApiObject:
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise DecodeError(f"{self._where}: line {self._count + 1} is not JSON: {exc}") from exc
        return self._row(value)

    def _row(self, value: Any) -> ApiObject:
        self._count += 1
        return self._model(value, f"{self._where}[{self._count}]")


def _cell(text: str, tp: Any) -> Any:
    if tp is None:
        return text  # a column added after this version of the library: kept as the file has it
    args = typing.get_args(tp)
    if text == "" and type(None) in args:
        return None
    if bool in (tp, *args) and text in ("true", "false"):
        return text == "true"
    return text
