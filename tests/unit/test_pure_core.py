"""The order core and the batch logic do no I/O: they import with asyncpg, redis and aiohttp unavailable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE = ("actors.batch", "actors.order", "actors.outcomes", "actors.intake", "actors.invariants", "actors.numbers")
_BLOCKED = """
import importlib.abc, sys
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"asyncpg", "redis", "aiohttp", "httpx", "psycopg"}:
            raise ImportError(f"{name} is I/O and the pure core must not import it")
sys.meta_path.insert(0, Blocked())
import %s
"""


@pytest.mark.parametrize("module", PURE)
def test_the_pure_core_imports_nothing_that_does_io(module):
    done = subprocess.run([sys.executable, "-c", _BLOCKED % module], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
