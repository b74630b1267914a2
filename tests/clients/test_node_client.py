"""The Node server library (clients/node, built by `npm ci && npm run build` there, as .ci/run does): every
operation of the live OpenAPI document has a method, and the conformance cases pass against a real deployment."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from tests.clients.test_python_client import live_operations

NODE_DIR = Path(__file__).resolve().parents[2] / "clients" / "node"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def built() -> Path:
    dist = NODE_DIR / "dist" / "index.js"
    assert dist.is_file(), "clients/node is not built: run `npm ci && npm run build` in clients/node"
    return dist


async def node(*args: str, cwd: Path = NODE_DIR, timeout: float = 300) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec("node", *args, cwd=cwd, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode()


async def test_every_operation_of_the_live_openapi_document_has_a_node_method(stack):
    built()
    code, out = await node("--input-type=module", "-e",
                           "import { OPERATIONS } from './dist/index.js'; console.log(JSON.stringify(OPERATIONS))")
    assert code == 0, out
    table = json.loads(out)
    covered = {(method, op["path"]) for op in table for method in (op["method"], *op.get("aliases", []))}
    live = await live_operations(stack)
    missing = sorted(live - covered)
    assert not missing, f"operations without a method in clients/node/src/operations.ts: {missing}"
    assert not sorted(covered - live), f"methods for operations the service does not have: {sorted(covered - live)}"
    assert len({(op["resource"], op["name"]) for op in table}) == len(table)


async def test_conformance_with_the_node_client(harness, tmp_path):
    built()
    running, pool, vault = harness
    env = tmp_path / "env.json"
    env.write_text(json.dumps(await running.runner_env(pool, vault, "node")))
    code, out = await node("test/conformance.mjs", str(env))
    assert code == 0, out
    passed = [line for line in out.splitlines() if line.startswith("ok - ")]
    assert len(passed) == len(json.loads((NODE_DIR.parents[0] / "conformance" / "cases.json").read_text())["cases"])
