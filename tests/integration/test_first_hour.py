"""A new merchant developer's first hour, as the README leads it: what they run prints nothing they must puzzle
over, and the README's own first-payment steps work from a merchant created to a verified webhook."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp

from chain_watchers.registry import load_registry
from testkit.signed import Signed
from tests.integration import library_readmes
from tests.integration.test_dev import _ready, _start
from tests.support.processes import QUICK, free_port

ROOT = Path(__file__).resolve().parents[2]


def _stop_embedded_postgres(data_dir: Path) -> None:
    if (data_dir / "postgres" / "postmaster.pid").exists():
        subprocess.run([sys.executable, "-c", "import sys, pgserver; from service.embedded import stop_postgres;"
                        " stop_postgres(pgserver.get_server(sys.argv[1], cleanup_mode=None))",
                        str(data_dir / "postgres")], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       capture_output=True, timeout=60)


def test_a_cli_call_on_the_embedded_defaults_prints_no_warning(tmp_path):
    """A shell with no XDG_RUNTIME_DIR (a container, ssh, CI) got a RuntimeDirWarning and a source line on every
    call; the embedded PostgreSQL's runtime directory is now named before it is imported. With no `service dev`
    running, the one line it prints says where it works, and it leaves no PostgreSQL running."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "DATABASE_URL")}
    env |= {"SERVICE_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    try:
        out = subprocess.run([sys.executable, "-m", "service", "merchants", "list"], env=env, cwd=ROOT,
                             capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr.decode()[-2000:]
        assert out.stderr.decode() == (f"service: no `service dev` runs on {tmp_path}: this command starts the embedded"
                                       " PostgreSQL there and stops it when it ends (set SERVICE_DATA_DIR or"
                                       " DATABASE_URL to work elsewhere)\n")
        assert not (tmp_path / "postgres" / "postmaster.pid").exists()
    finally:
        _stop_embedded_postgres(tmp_path)


def _readme_blocks() -> dict[str, str]:
    """The README's first-payment blocks, by the name in the marker above each."""
    text = (ROOT / "README.md").read_text()
    return dict(re.findall(r"<!-- first-payment: (\S+) -->\n```\w+\n(.*?)```", text, re.S))


async def test_the_readme_then_the_libraries_readmes_on_a_fresh_service_dev_whose_log_holds_no_error(tmp_path):
    """From a merchant created to a verified webhook, as the README says, word for word: the page shows a way to
    pay (receive_addresses set first), the signed calls are answered, the test payment makes the order PAID and
    the webhook that says so verifies with the endpoint's secret. Then every example of the Python and Node
    libraries' READMEs, as written, on that merchant. And all along, the service's log (every process of `service
    dev`, from its start to its stop) holds no ERROR line and no traceback: a first user reads either as broken."""
    blocks = _readme_blocks()
    assert set(blocks) == {"sh", "first_payment.py"}
    (tmp_path / "first_payment.py").write_text(blocks["first_payment.py"])
    data_dir, port, log = tmp_path / "data", free_port(), tmp_path / "service.log"
    dev = _start(data_dir, port, log=log, LOG_LEVEL="INFO")
    try:
        async with aiohttp.ClientSession() as http:
            await _ready(http, port, timeout=180)  # a fresh data folder: initdb and every migration first
            env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "XDG_RUNTIME_DIR")}
            env |= {"SERVICE_DATA_DIR": str(data_dir), "BASE_URL": f"http://127.0.0.1:{port}",
                    "PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
            # `service` is the console script `pip install -e .` makes; here the same entry point by module.
            script = "set -e\nservice() { python -m service \"$@\"; }\n" + blocks["sh"]
            out = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, timeout=180)
            stdout, stderr = out.stdout.decode(), out.stderr.decode()
            assert out.returncode == 0, stderr[-3000:]
            # Nothing to puzzle over (no warning, no traceback): only the example receiver's own access log line.
            assert [line for line in stderr.splitlines() if '"POST /hooks HTTP/1.1" 204' not in line] == []
            first, *_, last = stdout.splitlines()
            page = re.fullmatch(rf"checkout page: (http://127\.0\.0\.1:{port}/c/cs_test_\w+)", first)
            assert page, stdout
            assert re.fullmatch(r"verified payment\.settled order ord_\w+ PAID", last), stdout
            # The merchant the steps made now shows buyers a way to pay on a new checkout.
            keys = json.loads((tmp_path / "merchant.json").read_text())
            client = Signed(http, f"http://127.0.0.1:{port}", keys["public_key"], keys["secret_key"],
                            keys["merchant_id"])
            status, created = await client.post(QUICK, {"amount": "3.00"})
            assert status == 201, created
            async with http.get(created["checkout_url"] + "?locale=en") as resp:
                html = await resp.text()
            assert 'data-testid="no-networks"' not in html and "Ethereum Sepolia" in html
            await _libraries_readmes(keys, f"http://127.0.0.1:{port}", tmp_path, env)
    finally:
        dev.send_signal(signal.SIGTERM)
        dev.wait(60)
    logged = log.read_text()
    assert "dev: dashboard and API base" in logged and "watch: evm watcher on" in logged  # every process spoke
    assert [line for line in logged.splitlines() if re.search(r"\bERROR\b|Traceback", line)] == []


async def _libraries_readmes(keys: dict, base_url: str, tmp_path: Path, env: dict) -> None:
    """The Python library's README examples, then the Node library's (when Node is installed), on the merchant."""
    network = next(n for n in load_registry().networks if n.slug == "sepolia")
    python_dir, node_dir = tmp_path / "python", tmp_path / "node"
    python_dir.mkdir()
    node_dir.mkdir()
    live = subprocess.run([sys.executable, "-m", "service", "keys", "create", keys["merchant_id"], "--live", "--json"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert live.returncode == 0, live.stderr
    live_keys = json.loads(live.stdout)
    ran = await asyncio.to_thread(library_readmes.run_python, keys, live_keys, base_url, network.slug,
                                  network.stablecoins[0].address, python_dir)
    seen = ran["seen"]
    assert seen["receive"] == [200, 400]  # the real delivery verifies; the same bytes with one more do not
    [(order,)] = seen["fulfil"]
    assert (order.external_ref, order.status, order.order_id) == ("A-1001", "PAID", ran["session"].order_id)
    assert seen["redirect_buyer_to"] == [(ran["session"].checkout_url,)]
    assert len(seen["send_to_ana"]) == 1 and len(seen["share"]) == 1
    assert (python_dir / "payments-march.csv").stat().st_size > 0
    if shutil.which("node") is None:
        return
    assert (library_readmes.NODE_DIR / "dist" / "index.js").is_file(), \
        "clients/node is not built: run `npm ci && npm run build` in clients/node"
    made = subprocess.run([sys.executable, "-m", "service", "users", "create", "--merchant", keys["merchant_id"],
                           "--email", "manager@example.com", "--password", "a long enough password 1",
                           "--role", "manager", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    ran_node = await asyncio.to_thread(library_readmes.run_node, keys, live_keys, base_url, node_dir, ran["secret"],
                                       json.loads(made.stdout)["user_id"], ran["delivery"])
    assert ran_node["path"] == "/hooks" and ran_node["answers"] == [200, 400]
    assert ran_node["seen"]["fulfil"] == ["A-1001"]
    assert len(ran_node["seen"]["sendToAna"]) == 1 and len(ran_node["seen"]["share"]) == 1
    assert (node_dir / "payments-march.csv").stat().st_size > 0


def test_a_watcher_dropping_an_unanswering_node_logs_no_line_per_retry():
    """web3's providers said "Successfully disconnected from ..." at INFO each time a watcher dropped the adapter of a
    node that did not answer: a line per retry beside the watcher's one warning. The CLI quiets them as it does
    apscheduler's per-run lines."""
    code = ("import logging, sys\nfrom service import cli\ntry:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(logging.getLogger('web3.providers.AsyncHTTPProvider').getEffectiveLevel())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines()[-1] == str(logging.WARNING)
