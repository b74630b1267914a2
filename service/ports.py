"""Whether the web port is free, and when it is not, which process holds it: a second service on a taken port must
stop at once saying so, not share the port with the first (requests would split between two services)."""

from __future__ import annotations

import errno
import socket

import psutil


class PortTaken(Exception):
    """The port is listened on already; the message names the port and the process holding it."""


def check_free(host: str, port: int) -> None:
    """Raise PortTaken when another socket listens on host:port. The probe binds as the web process will (with
    SO_REUSEADDR, without SO_REUSEPORT), so a port in TIME_WAIT alone counts as free."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            raise PortTaken(f"port {port} is taken by {holder(port)}") from None


def holder(port: int) -> str:
    """The process listening on the port, as an operator would look for it: its pid, command line and folder."""
    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port and conn.pid:
            return described(conn.pid)
    return "a process this user cannot see (another user's; `ss -ltnp` as root names it)"


def described(pid: int) -> str:
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            return f"pid {pid} ({' '.join(process.cmdline())}, in {process.cwd()})"
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return f"pid {pid}"
