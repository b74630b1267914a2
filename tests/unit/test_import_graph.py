"""The top-level packages import each other in layers (docs/architecture.md): a new import that goes up a
layer, or makes a cycle, fails here rather than in next year's refactoring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What each package may import of the project; the pure helpers of `common` import nothing at all, and of its
# I/O helpers only common/lifecycle.py, which opens a process's Redis client, imports `streams`. `accounts`
# stands on `common` alone: `common` never imports it.
ALLOWED = {
    "common": {"streams"},
    "contract": set(),
    "streams": set(),
    "accounts": {"common"},
    "actors": {"common", "contract", "streams"},
    "chain_watchers": {"accounts", "actors", "common", "streams"},
    "cards": {"actors", "common", "streams"},
    "notify": {"accounts", "actors", "common", "contract", "streams"},
    "webhooks": {"actors", "common", "contract", "notify", "streams"},
    "web": {"accounts", "actors", "cards", "chain_watchers", "common", "contract", "notify", "streams", "webhooks"},
    "service": {"accounts", "actors", "cards", "chain_watchers", "common", "contract", "notify", "streams", "web",
                "webhooks"},
}
PURE = ("common/money.py", "common/ids.py", "common/clock.py", "common/order_limits.py", "common/backoff.py",
        "accounts/roles.py")
LIFECYCLE = "common/lifecycle.py"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_the_layers_below_it(package):
    crossings = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in (ROOT / package).rglob("*.py")
        for name in _imports(path)
        if name in ALLOWED and name != package and name not in ALLOWED[package]
    }
    assert not crossings


@pytest.mark.parametrize("module", PURE)
def test_pure_helpers_import_nothing_of_the_project_but_each_other(module):
    assert not (_imports(ROOT / module) & (set(ALLOWED) - {"common"}))


def test_of_common_only_the_process_lifecycle_imports_streams():
    assert {str(path.relative_to(ROOT)) for path in (ROOT / "common").rglob("*.py") if "streams" in _imports(path)} \
        == {LIFECYCLE}


def test_product_code_imports_nothing_of_the_tests_and_names_no_module_test():
    modules = [path for package in ALLOWED for path in (ROOT / package).rglob("*.py")]
    assert not [str(p.relative_to(ROOT)) for p in modules if p.name.startswith("test_")]
    # The benchmarks share a deployment's drivers with the tests through testkit/, not by importing the tests.
    shared = modules + [*(ROOT / "bench").rglob("*.py"), *(ROOT / "testkit").rglob("*.py")]
    assert not [str(p.relative_to(ROOT)) for p in shared if "tests" in _imports(p)]
