"""CSV and JSON Lines encodings of export rows, written a chunk at a time.

CSV cells are made inert for spreadsheets (OWASP, CSV injection): a cell that begins with `=`, `+`, `-`, `@`, a tab
or a carriage return is prefixed with a single quote, so Excel, LibreOffice and Google Sheets show it as text rather
than evaluate it; every cell is quoted, so a quote or separator inside one cannot start another. JSON Lines is not
opened by spreadsheets and carries every value as it is.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

import msgspec

FORMATS = {"csv": ("text/csv; charset=utf-8", "csv"), "jsonl": ("application/x-ndjson", "jsonl")}
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_encode = msgspec.json.Encoder().encode


def safe_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


class CsvWriter:
    """Rows of one struct type to CSV text, the header first."""

    def __init__(self, row_type: type) -> None:
        self.fields = row_type.__struct_fields__
        self._buffer = io.StringIO()
        self._csv = csv.writer(self._buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")

    def header(self) -> bytes:
        return self._take(lambda: self._csv.writerow(self.fields))

    def rows(self, rows: Iterable[msgspec.Struct]) -> bytes:
        return self._take(lambda: self._csv.writerows(
            [safe_cell(getattr(row, name)) for name in self.fields] for row in rows))

    def _take(self, write) -> bytes:
        write()
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return text.encode()


class JsonLinesWriter:
    def __init__(self, row_type: type) -> None:
        pass

    def header(self) -> bytes:
        return b""

    def rows(self, rows: Iterable[msgspec.Struct]) -> bytes:
        return b"".join(_encode(row) + b"\n" for row in rows)


WRITERS = {"csv": CsvWriter, "jsonl": JsonLinesWriter}
