"""web/ stands in floors, read top-down: the app, the dashboard, the buyers' pages, the signed API, the exports, the
reads they share, the HTTP edge, the pages' message tables. A module imports its own floor and those below, never one
above, and no modules import each other in a loop: a new import that breaks either fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
FLOORS = ("app", "dashboard", "pages", "api", "exports", "reads", "edge", "i18n")  # from the top floor down


def _modules() -> dict[str, Path]:
    return {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
            for path in WEB.rglob("*.py") if "sdk" not in path.relative_to(WEB).parts}


MODULES = _modules()


def _floor(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS else None


def _imports(path: Path) -> set[str]:
    """The web modules a file imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES else node.module
                      for alias in node.names}
    return {name for name in found if name in MODULES}


GRAPH = {module: _imports(path) for module, path in MODULES.items()}


def test_every_web_module_stands_on_a_floor():
    assert not [module for module in MODULES if module != "web" and _floor(module) is None]


@pytest.mark.parametrize("floor", FLOORS)
def test_a_floor_imports_only_itself_and_the_floors_below(floor):
    above = set(FLOORS[:FLOORS.index(floor)])
    assert not {f"{module} imports {name}" for module, names in GRAPH.items() if _floor(module) == floor
                for name in names if _floor(name) in above}


def test_no_web_modules_import_each_other_in_a_loop():
    done: set[str] = set()
    loops = []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            loops.append(" -> ".join(path[path.index(module):] + [module]))
            return
        if module in done:
            return
        for name in sorted(GRAPH[module]):
            visit(name, path + [module])
        done.add(module)

    for module in sorted(GRAPH):
        visit(module, [])
    assert not loops
