"""CSV cells that a spreadsheet would evaluate are written as text (OWASP, CSV injection)."""

from __future__ import annotations

import csv
import io

import msgspec
import pytest

from web.exports.formats import CsvWriter, JsonLinesWriter, safe_cell


@pytest.mark.parametrize("value, cell", [
    ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
    ("+1+2", "'+1+2"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("plain = text", "plain = text"),
    ("10.50", "10.50"),
    (None, ""),
    (True, "true"),
    (False, "false"),
])
def test_safe_cell(value, cell):
    assert safe_cell(value) == cell


class Row(msgspec.Struct):
    name: str
    note: str | None


def test_csv_quotes_every_cell_after_one_header():
    writer = CsvWriter(Row)
    text = (writer.header() + writer.rows([Row("a,b", '=1"2'), Row("c", None)])).decode()
    assert text.splitlines()[0] == '"name","note"'
    assert list(csv.reader(io.StringIO(text))) == [["name", "note"], ["a,b", "'=1\"2"], ["c", ""]]


def test_json_lines_keep_values_as_they_are():
    writer = JsonLinesWriter(Row)
    assert writer.header() + writer.rows([Row("=1", None)]) == b'{"name":"=1","note":null}\n'
