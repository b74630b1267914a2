"""Every table has exactly one module that writes it: a second INSERT, UPDATE or DELETE of a table somewhere else
fails here, naming both (docs/architecture.md, Who writes what)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("actors", "cards", "chain_watchers", "common", "contract", "notify", "service", "streams",
           "web", "webhooks")
# SQL keywords upper case, table names lower case, as every statement of the product writes them. An ON CONFLICT
# clause's `DO UPDATE SET` names no table and does not match.
_WRITE = re.compile(r"\b(?:INSERT\s+INTO|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)\s+([a-z_][a-z0-9_]*)"
                    r"|\bUPDATE\s+([a-z_][a-z0-9_]*)(?:\s+[a-z]+)?\s+SET\b")


def writers() -> dict[str, set[str]]:
    """Table -> the modules whose SQL writes it, read from every string literal of the product's code."""
    found: dict[str, set[str]] = {}
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            module = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    for match in _WRITE.finditer(node.value):
                        found.setdefault(match.group(1) or match.group(2), set()).add(module)
    return found


def test_every_table_has_one_writing_module():
    shared = {table: sorted(modules) for table, modules in writers().items() if len(modules) > 1}
    assert not shared, f"tables written from more than one module: {shared}"


def test_the_writers_are_found():
    # The reader of the SQL finds what it must: the order tables are the actors' store's alone.
    found = writers()
    assert {table: found[table] for table in ("orders", "events", "commands", "refunds")} == {
        table: {"actors/store.py"} for table in ("orders", "events", "commands", "refunds")}
