"""`service dev` on its embedded PostgreSQL and Redis: stopped (SIGTERM, then Ctrl-C's SIGINT) it leaves no process
behind, and started again on the same data folder it serves."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import psutil
import pytest

from testkit.signed import Signed
from tests.support.processes import QUICK, free_port, until_answered

ROOT = Path(__file__).resolve().parents[2]


def _start(data_dir: Path, port: int, log: Path | None = None, **env_extra: str) -> subprocess.Popen:
    """`service dev` on the data folder; with `log`, everything it and its processes print goes there."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "METRICS_PORT")}
    env |= {"SERVICE_DATA_DIR": str(data_dir), "LOG_LEVEL": "WARNING"} | env_extra
    out = subprocess.DEVNULL if log is None else log.open("ab")
    return subprocess.Popen([sys.executable, "-m", "service", "dev", "--port", str(port)], env=env, cwd=ROOT,
                            stdout=out, stderr=None if log is None else subprocess.STDOUT)


def _tree(dev: subprocess.Popen, data_dir: Path) -> list[psutil.Process]:
    """Every process the run started: its children, the embedded PostgreSQL and the embedded Redis (both detach
    from it), the latter found by the port its children were given."""
    children = psutil.Process(dev.pid).children(recursive=True)
    postmaster = psutil.Process(int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0]))
    redis_url = next(env["REDIS_URL"] for env in (c.environ() for c in children) if "REDIS_URL" in env)
    redis_port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    redis = next(psutil.Process(c.pid) for c in psutil.net_connections("tcp")
                 if c.status == psutil.CONN_LISTEN and c.laddr.port == redis_port)
    return [*children, postmaster, *postmaster.children(), redis]


def _merchant(data_dir: Path) -> dict:
    env = dict(os.environ, SERVICE_DATA_DIR=str(data_dir))
    env.pop("DATABASE_URL", None)
    out = subprocess.run([sys.executable, "-m", "service", "merchants", "create", "--name", "Dev", "--json"],
                         env=env, cwd=ROOT, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode()[-3000:]
    return json.loads(out.stdout)


async def _ready(http: aiohttp.ClientSession, port: int, timeout: float = 60) -> None:
    """Its web process answers /readyz with 200: the embedded servers run and the migrations are applied."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with http.get(f"http://127.0.0.1:{port}/readyz") as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        assert time.monotonic() < deadline, "service dev never became ready"
        await asyncio.sleep(0.2)


async def _serves(data_dir: Path, port: int) -> None:
    async with aiohttp.ClientSession() as http:
        await _ready(http, port)
        pair = _merchant(data_dir)
        client = Signed(http, f"http://127.0.0.1:{port}", pair["public_key"], pair["secret_key"], pair["merchant_id"])
        await until_answered(client, timeout=60)
        status, _ = await client.post(QUICK, {"amount": "3.00"})
        assert status == 201


def _stopped(dev: subprocess.Popen, how: signal.Signals, started: list[psutil.Process]) -> None:
    dev.send_signal(how)
    assert dev.wait(60) == 0
    _gone, alive = psutil.wait_procs(started, timeout=10)
    assert not alive, [(p.pid, p.cmdline()) for p in alive]


async def test_stopping_dev_stops_what_it_started_and_it_starts_again(tmp_path):
    data_dir, port = tmp_path / "data", free_port()
    started: list[psutil.Process] = []
    try:
        for how in (signal.SIGTERM, signal.SIGINT):
            dev = _start(data_dir, port)
            started = [psutil.Process(dev.pid)]
            await _serves(data_dir, port)
            started += _tree(dev, data_dir)
            _stopped(dev, how, started[1:])
    finally:  # whatever a failed run left
        for process in started:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()


@pytest.mark.parametrize("command", [["dev"], ["web"]])
def test_a_second_server_on_a_taken_port_stops_naming_the_port_and_its_holder(tmp_path, settings, command):
    """Two `service dev --port 8080` from two checkouts both listened (SO_REUSEPORT), and requests split between two
    services with different databases. The second now stops at once, before starting anything, and says who holds
    the port."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        env = dict(os.environ, SERVICE_DATA_DIR=str(tmp_path / "data"), DATABASE_URL=settings.database_url,
                   REDIS_URL=settings.redis_url, METRICS_PORT="0")
        if command == ["dev"]:  # on its embedded defaults, which it must not start
            del env["DATABASE_URL"], env["REDIS_URL"]
        done = subprocess.run([sys.executable, "-m", "service", *command, "--port", str(port)], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"port {port} is taken by pid {os.getpid()} (" in done.stderr and str(ROOT) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "data").exists()


def _outside(folder: Path, runtime: Path, *args: str) -> subprocess.CompletedProcess:
    """An operator command run in a folder of no checkout, on the embedded defaults (nothing configured)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SERVICE_DATA_DIR")}
    env |= {"PYTHONPATH": str(ROOT), "XDG_RUNTIME_DIR": str(runtime)}
    folder.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "service", *args], env=env, cwd=folder, capture_output=True,
                          text=True, timeout=120)


async def test_an_operator_command_run_outside_the_checkout_works_on_the_running_dev(tmp_path):
    """`service merchants create` run from another folder started a second embedded database there (left running)
    and made a merchant the running service never saw. It finds the running `service dev` now, and says so."""
    data_dir, port, runtime = tmp_path / "data", free_port(), tmp_path / "run"
    runtime.mkdir(mode=0o700)
    dev = _start(data_dir, port, XDG_RUNTIME_DIR=str(runtime))
    try:
        async with aiohttp.ClientSession() as http:
            await _ready(http, port, timeout=180)  # a fresh data folder: initdb and every migration first
            made = _outside(tmp_path / "home", runtime, "merchants", "create", "--name", "Elsewhere", "--json")
            assert made.returncode == 0, made.stderr
            assert f"working on the data of `service dev` on port {port} (pid {dev.pid}, data in {data_dir})" in \
                made.stderr
            assert not (tmp_path / "home" / ".service-data").exists()
            pair = json.loads(made.stdout)
            client = Signed(http, f"http://127.0.0.1:{port}", pair["public_key"], pair["secret_key"],
                            pair["merchant_id"])
            await until_answered(client, timeout=60)
            status, _ = await client.post(QUICK, {"amount": "3.00"})
            assert status == 201
    finally:
        dev.send_signal(signal.SIGTERM)
        dev.wait(60)
    # Stopped, it no longer announces itself: the same command now says where it writes, and leaves no server.
    alone = _outside(tmp_path / "home", runtime, "merchants", "list")
    assert alone.returncode == 0, alone.stderr
    home_data = tmp_path / "home" / ".service-data"
    assert alone.stderr.startswith(f"service: no `service dev` runs on {home_data}: this command starts the embedded"
                                   " PostgreSQL there and stops it when it ends")
    assert not (home_data / "postgres" / "postmaster.pid").exists()


def test_with_several_dev_running_a_command_outside_any_checkout_refuses_to_guess(tmp_path):
    runtime = tmp_path / "run"
    (runtime / "service-dev").mkdir(parents=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for pid, port in ((os.getpid(), 8080), (sleeper.pid, 8090)):
            (runtime / "service-dev" / f"{pid}.json").write_text(json.dumps({
                "pid": pid, "port": port, "data_dir": f"/checkouts/{port}/.service-data",
                "database_url": "postgresql:///nowhere", "redis_url": "redis://127.0.0.1:1/0"}))
        refused = _outside(tmp_path / "home", runtime, "merchants", "create", "--name", "Which")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert refused.returncode != 0 and refused.stdout == ""
    assert "several `service dev` run" in refused.stderr and "SERVICE_DATA_DIR" in refused.stderr
    assert "on port 8080" in refused.stderr and "on port 8090" in refused.stderr
    assert not (tmp_path / "home" / ".service-data").exists()
