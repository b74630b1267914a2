"""The browser SDK's builds are committed (web/sdk/dist), so a fresh clone serves /sdk/index.global.js with no Node
toolchain, and they are what the SDK's sources build to today."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "web" / "sdk"
BUILDS = ["index.js", "index.cjs", "index.global.js", "index.d.ts", "index.d.cts"]


def test_a_fresh_clone_has_every_build_the_checkout_origin_serves():
    tracked = subprocess.run(["git", "ls-files", "web/sdk/dist"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert {f"web/sdk/dist/{name}" for name in BUILDS} <= set(tracked)


def test_the_committed_builds_are_what_the_sources_build_to():
    if not (SDK / "node_modules" / ".bin" / "tsup").exists():
        pytest.skip("the SDK's toolchain is not installed (`npm ci` in web/sdk; .ci/run does it)")
    # A sibling of dist, so that the source maps' relative paths come out the same.
    fresh = SDK / "dist-check"
    try:
        subprocess.run(["npx", "tsup", "--out-dir", fresh.name], cwd=SDK, capture_output=True, check=True,
                       timeout=300)
        stale = [name for name in sorted(p.name for p in fresh.iterdir())
                 if not filecmp.cmp(fresh / name, SDK / "dist" / name, shallow=False)]
        assert stale == [], "rebuild and commit web/sdk/dist: `cd web/sdk && npm run build`"
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
