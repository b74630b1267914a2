"""A Patroni cluster on this machine: etcd and three PostgreSQL 15 members, each Patroni run as user postgres.

`.ci/ha-tools` installs what it runs (Debian's etcd-server and PostgreSQL 15, Patroni from requirements/patroni.txt
in /opt/patroni). Ports: etcd 2379/2380, PostgreSQL 5441-5443, Patroni's REST API 8008-8010.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import psutil

PATRONI = Path(os.environ.get("HA_PATRONI_VENV", "/opt/patroni")) / "bin"
PG_BIN = "/usr/lib/postgresql/15/bin"
ETCD = "127.0.0.1:2379"
ETCD_PEER = "127.0.0.1:2380"
# The smallest leader lease Patroni takes (it raises a smaller one to 20 s); a lost leader's key outlives it by
# at most this long, and a member checks every second.
TTL_S = 20
LOOP_WAIT_S = 1
RETRY_TIMEOUT_S = 3


@dataclass
class Member:
    name: str
    pg_port: int
    rest_port: int
    folder: Path
    proc: subprocess.Popen | None = None

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def config(self) -> Path:
        return self.folder / "patroni.yml"

    def postmaster(self) -> psutil.Process | None:
        try:
            return psutil.Process(int((self.data_dir / "postmaster.pid").read_text().split()[0]))
        except (OSError, ValueError, IndexError, psutil.NoSuchProcess):
            return None


def missing_tools() -> list[str]:
    wanted = [PATRONI / "patroni", PATRONI / "patronictl", Path(PG_BIN) / "postgres", shutil.which("etcd") or "etcd"]
    return [str(path) for path in wanted if not Path(path).exists()]


class Cluster:
    """Started by `start`, stopped (every process, every folder) by `stop`."""

    def __init__(self, scope: str = "svc-ha"):
        self.scope = scope
        self.root = Path(tempfile.mkdtemp(prefix="svc-ha-"))
        self.root.chmod(0o755)
        self.members = [Member(f"m{n}", 5440 + n, 8007 + n, self.root / f"m{n}") for n in (1, 2, 3)]
        self.etcd: subprocess.Popen | None = None
        self.lost: Member | None = None  # the member whose machine `lose` took
        self._logs: list = []

    @property
    def url(self) -> str:
        """libpq's multi-host form, as an operator writes DATABASE_URL; the database is added by the caller."""
        hosts = ",".join(f"127.0.0.1:{m.pg_port}" for m in self.members)
        return f"postgresql://postgres@{hosts}/postgres?target_session_attrs=read-write"

    def _log(self, path: Path):
        file = open(path, "ab")  # noqa: SIM115 - closed by stop()
        self._logs.append(file)
        return file

    def start(self) -> None:
        folder = self.root / "etcd"
        self.etcd = subprocess.Popen(
            ["etcd", "--name", "ha", "--data-dir", str(folder), "--listen-client-urls", f"http://{ETCD}",
             "--advertise-client-urls", f"http://{ETCD}", "--listen-peer-urls", f"http://{ETCD_PEER}",
             "--initial-advertise-peer-urls", f"http://{ETCD_PEER}", "--initial-cluster", f"ha=http://{ETCD_PEER}"],
            stdout=subprocess.DEVNULL, stderr=self._log(self.root / "etcd.log"))
        try:
            self.etcd.wait(1)  # a system etcd on these ports (apt-get starts one where systemd runs) stops it at once
        except subprocess.TimeoutExpired:
            pass
        else:
            raise AssertionError(f"etcd did not start: {(self.root / 'etcd.log').read_text()[-2000:]}")
        for member in self.members:
            member.folder.mkdir()
            member.config.write_text(json.dumps(self._config(member)))
            shutil.chown(member.folder, "postgres", "postgres")
        for member in self.members:
            self.run(member)

    def _config(self, member: Member) -> dict:
        trust = ["local all all trust", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust"]
        return {
            "scope": self.scope, "name": member.name,
            "log": {"dir": str(member.folder), "level": "INFO"},
            "restapi": {"listen": f"127.0.0.1:{member.rest_port}", "connect_address": f"127.0.0.1:{member.rest_port}"},
            "etcd3": {"hosts": ETCD},
            "bootstrap": {
                "dcs": {"ttl": TTL_S, "loop_wait": LOOP_WAIT_S, "retry_timeout": RETRY_TIMEOUT_S,
                        "synchronous_mode": True,
                        "postgresql": {"use_pg_rewind": True, "parameters": {
                            "wal_log_hints": "on", "max_connections": 200, "shared_buffers": "64MB",
                            "max_wal_senders": 10, "max_replication_slots": 10, "wal_keep_size": "256MB"}}},
                "initdb": [{"encoding": "UTF8"}, {"locale": "C"}],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{member.pg_port}", "connect_address": f"127.0.0.1:{member.pg_port}",
                "data_dir": str(member.data_dir), "bin_dir": PG_BIN, "pgpass": str(member.folder / "pgpass"),
                "pg_hba": trust,
                "authentication": {"superuser": {"username": "postgres"},
                                   "replication": {"username": "postgres"},
                                   "rewind": {"username": "postgres"}},
                "parameters": {"unix_socket_directories": str(member.folder)},
                # A member whose WAL went past the new leader's (it was killed mid-commit) is rewound, or cloned
                # again when rewinding fails: the suite checks that it rejoins either way.
                "remove_data_directory_on_rewind_failure": True,
                "remove_data_directory_on_diverged_timelines": True,
            },
        }

    def run(self, member: Member) -> None:
        """Start (or start again) a member's Patroni, which starts its PostgreSQL."""
        member.proc = subprocess.Popen([str(PATRONI / "patroni"), str(member.config)], user="postgres",
                                       group="postgres", extra_groups=[], cwd=member.folder,
                                       env={"PATH": "/usr/bin:/bin", "HOME": str(member.folder)},
                                       stdout=self._log(member.folder / "patroni.out"), stderr=subprocess.STDOUT)

    def _signal(self, member: Member, sig: signal.Signals) -> None:
        """Its Patroni, its postmaster and every PostgreSQL process, at once."""
        postmaster = member.postmaster()
        for process in [psutil.Process(member.proc.pid)] + ([postmaster, *postmaster.children()] if postmaster else []):
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(sig)

    def lose(self, member: Member) -> None:
        """The member's machine lost: every process of it SIGKILLed; the connections to it are reset."""
        self._signal(member, signal.SIGKILL)
        member.proc.wait()
        self.lost = member

    def freeze(self, member: Member) -> None:
        """The member's machine cut off: every process of it stopped (SIGSTOP). Its connections stay open and nothing
        answers on them, as when its network is gone; `lose` it afterwards to end them."""
        self._signal(member, signal.SIGSTOP)

    async def state(self) -> list[dict]:
        """The members as a live member's REST API sees them (`role`: leader, sync_standby, replica)."""
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1)) as http:
            for member in self.members:
                if member.proc is None or member.proc.poll() is not None:
                    continue
                try:
                    async with http.get(f"http://127.0.0.1:{member.rest_port}/cluster") as resp:
                        return (await resp.json())["members"]
                except (aiohttp.ClientError, TimeoutError, ValueError, KeyError):
                    continue
        return []

    async def leader(self) -> Member | None:
        names = [m["name"] for m in await self.state() if m["role"] == "leader" and m["state"] == "running"]
        return next((m for m in self.members if m.name in names), None)

    async def healthy(self, timeout: float) -> list[dict]:
        """Waits for a running leader, a streaming sync standby and the third member streaming too."""
        deadline = time.monotonic() + timeout
        while True:
            found = await self.state()
            roles = sorted((m["role"], m["state"]) for m in found)
            if roles == [("leader", "running"), ("replica", "streaming"), ("sync_standby", "streaming")]:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"the Patroni cluster is not healthy after {timeout} s: {found}")
            await asyncio.sleep(0.5)

    def switchover(self, leader: Member, candidate: Member) -> None:
        subprocess.run([str(PATRONI / "patronictl"), "-c", str(leader.config), "switchover", self.scope,
                        "--leader", leader.name, "--candidate", candidate.name, "--force"],
                       check=True, capture_output=True, timeout=60)

    def stop(self) -> None:
        for member in self.members:
            if member.proc is not None and member.proc.poll() is None:
                member.proc.terminate()  # Patroni stops its PostgreSQL first
        for member in self.members:
            if member.proc is not None:
                try:
                    member.proc.wait(30)
                except subprocess.TimeoutExpired:
                    member.proc.kill()
            postmaster = member.postmaster()
            if postmaster is not None:
                postmaster.kill()
        if self.etcd is not None:
            self.etcd.terminate()
            self.etcd.wait(10)
        for file in self._logs:
            file.close()
        shutil.rmtree(self.root, ignore_errors=True)
