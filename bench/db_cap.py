"""Hold the PostgreSQL server to a CPU quota for a benchmark, and give it back afterwards whatever happens.

The postmaster and every process it has started are moved into a cgroup v1 `cpu` group with a CFS quota of `cores`
CPUs (cpu.cfs_quota_us = cores x cpu.cfs_period_us); backends started later are forked by the postmaster and so
start inside it. Releasing moves every process of the group back to the root group and removes the group. A bench
killed outright (SIGKILL) cannot release: the group has a fixed name, and the next run's hold releases it first.

    with DbCap.of_server(conn_data_directory, 0.25):   # PostgreSQL at a quarter of a core inside
        ...
"""

from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path
from typing import NamedTuple

import psutil

CPU_ROOT = Path("/sys/fs/cgroup/cpu")
GROUP = "svc_bench_db"
PERIOD_US = 100_000


def quota_us(cores: float, period_us: int = PERIOD_US) -> int:
    """The CFS quota that lets a group run `cores` CPUs' worth in each period (the kernel takes at least 1 ms)."""
    if cores <= 0:
        raise ValueError("a CPU cap needs a positive number of cores")
    return max(int(round(cores * period_us)), 1000)


def postmaster_pid(pid_file_text: str) -> int:
    """The postmaster's pid: the first line of postmaster.pid in the server's data directory."""
    first = pid_file_text.split("\n", 1)[0].strip()
    if not first.isdigit():
        raise ValueError(f"postmaster.pid does not start with a pid: {first!r}")
    return int(first)


def pids(procs_text: str) -> list[int]:
    """The pids of a cgroup.procs file, one a line."""
    return [int(line) for line in procs_text.split() if line.strip()]


class Throttling(NamedTuple):
    """A cpu group's cpu.stat: the CFS periods it ran in, those in which it hit its quota, and the time it waited."""
    periods: int
    throttled: int
    throttled_s: float

    def since(self, before: Throttling) -> Throttling:
        return Throttling(self.periods - before.periods, self.throttled - before.throttled,
                          self.throttled_s - before.throttled_s)

    @property
    def share(self) -> float:
        """Of the periods PostgreSQL ran in, the share in which it used its whole quota."""
        return self.throttled / self.periods if self.periods else 0.0


def throttling(stat_text: str) -> Throttling:
    fields = dict(line.split() for line in stat_text.splitlines() if line.strip())
    return Throttling(int(fields.get("nr_periods", 0)), int(fields.get("nr_throttled", 0)),
                      int(fields.get("throttled_time", 0)) / 1e9)


class DbCap:
    """The PostgreSQL server held to `cores` CPUs while the hold is entered (a context manager)."""

    def __init__(self, postmaster: int, cores: float, root: Path = CPU_ROOT, name: str = GROUP):
        self.postmaster, self.cores = postmaster, cores
        self.root, self.group = root, root / name

    @classmethod
    def of_server(cls, data_directory: str, cores: float) -> DbCap:
        return cls(postmaster_pid((Path(data_directory) / "postmaster.pid").read_text()), cores)

    def stat(self) -> Throttling:
        return throttling((self.group / "cpu.stat").read_text())

    def __enter__(self) -> DbCap:
        self.release()  # a group a killed run left behind
        self.group.mkdir()
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
        self._previous = previous
        for sig in previous:  # a bench told to stop stops through its finally blocks, which release the server
            signal.signal(sig, _raise_exit)
        try:
            (self.group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.group / "cpu.cfs_quota_us").write_text(str(quota_us(self.cores)))
            self._hold()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _hold(self) -> None:
        # The postmaster first: whatever it forks from then on starts in the group. Its children forked before
        # are moved one by one, listed again until none is left outside.
        _move(self.group, self.postmaster)
        for _ in range(20):
            outside = [p for p in _children(self.postmaster) if p not in set(self.members())]
            if not outside:
                return
            for pid in outside:
                _move(self.group, pid)
        raise RuntimeError("PostgreSQL's processes kept escaping the cpu group")

    def members(self) -> list[int]:
        return pids((self.group / "cgroup.procs").read_text())

    def __exit__(self, *exc) -> None:
        try:
            self.release()
        finally:
            for sig, handler in getattr(self, "_previous", {}).items():
                signal.signal(sig, handler)

    def release(self) -> None:
        """Every process of the group back in the root group, and the group removed (nothing when there is none)."""
        if not self.group.exists():
            return
        for attempt in range(50):
            for pid in self.members():
                _move(self.root, pid)
            try:
                self.group.rmdir()
                return
            except OSError as error:  # a backend forked while the others were moved: move again
                if error.errno != errno.EBUSY or attempt == 49:
                    raise
                time.sleep(0.02)


def _raise_exit(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _children(pid: int) -> list[int]:
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _move(group: Path, pid: int) -> None:
    try:
        (group / "cgroup.procs").write_text(str(pid))
    except ProcessLookupError:  # a backend that ended meanwhile
        pass
    except OSError as error:
        if error.errno != errno.ESRCH:
            raise


def available() -> bool:
    return os.access(CPU_ROOT, os.W_OK)
