"""Readers read the order's view, never its state (docs/architecture.md): outside actors/, no SQL reaches into the
JSON of `orders.state` and no module takes the state's structs or decodes a stored state itself; they read the
columns beside it or `actors.views`. The operator's replay tools (service/) rebuild the state on purpose."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READERS = sorted(p.parent for p in ROOT.glob("*/__init__.py") if p.parent.name not in {"actors", "service", "tests",
                                                                                          "testkit"})
# `state` followed by one of PostgreSQL's JSON operators that reach into a value: ->, ->>, #>, #>> and @>.
_INTO_STATE = re.compile(r"\bstate\s*(?:->|#>|@>)")
# What a reader may not take: the state's structs (also as actors.order re-exports them) and its decoders.
_STATE = {("actors", "state"), ("actors.order", "Order"), ("actors.schema", "snapshot"),
          ("actors.schema", "SNAPSHOTS"), ("schema", "snapshot"), ("schema", "SNAPSHOTS")}


def _modules() -> list[Path]:
    return [path for package in READERS for path in package.rglob("*.py")]


def test_the_readers_are_found():
    assert {p.name for p in READERS} >= {"web", "webhooks", "notify", "cards", "chain_watchers"}


def test_no_reader_reaches_into_the_state_json():
    found = [f"{path.relative_to(ROOT)}: {node.value.strip()[:80]}" for path in _modules()
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and _INTO_STATE.search(node.value)]
    assert not found, found


def _taken(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name == "actors.state"]
    if isinstance(node, ast.ImportFrom):
        return [f"{node.module}.{alias.name}" for alias in node.names
                if node.module == "actors.state" or (node.module, alias.name) in _STATE]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (node.value.id, node.attr) in _STATE:
        return [f"{node.value.id}.{node.attr}"]
    return []


def test_no_reader_takes_the_state_or_decodes_it():
    found = [f"{path.relative_to(ROOT)}: {name}" for path in _modules()
             for node in ast.walk(ast.parse(path.read_text())) for name in _taken(node)]
    assert not found, found
