"""What a benchmark round's CPU went to, by kind of process, and which resource ran out (pure: bench/run.py reads
the processes and the cgroup, and hands the figures here).

Kinds: the pipeline's `web` and `actors`, the rivals' `peer` and `bare` (together: the app), `PostgreSQL` (the
backends of the bench's database and the server's own processes: postmaster, checkpointer, WAL writer...), `Redis`
and `wrk`. Backends of other databases (other work sharing the server) are counted apart, as `PostgreSQL (other
databases)`: they are not the design's cost, but they share its cores and, under a cap, its quota.
"""

from __future__ import annotations

import re
from typing import NamedTuple

APP = ("web", "actors", "peer", "bare")
KINDS = {"postgres": "PostgreSQL", "postgres_others": "PostgreSQL (other databases)", "redis-server": "Redis"}
# Processes of the server that are no database's: their work (WAL writing, checkpoints) is the load's.
_SERVER_OWN = ("checkpointer", "background writer", "walwriter", "autovacuum launcher", "logical replication launcher",
               "archiver", "stats collector", "startup", "walsender", "walreceiver")
AT_QUOTA = 0.9  # of the cap, or of the cores, counts as all of it (sampling and accounting are not exact)
THROTTLED = 0.5  # of the CFS periods in which PostgreSQL ran, those in which it used its whole quota


def kind(name: str) -> str:
    """A process's kind from its name in the bench: web1 -> web, actors1 -> actors, redis-server -> Redis."""
    return KINDS.get(name, re.sub(r"\d+$", "", name))


def by_kind(seconds: dict[str, float]) -> dict[str, float]:
    """CPU seconds (or ms per request) of each process summed by kind, with `app` the sum of the app's kinds."""
    kinds: dict[str, float] = {}
    for name, value in seconds.items():
        kinds[kind(name)] = kinds.get(kind(name), 0.0) + value
    kinds["app"] = sum(v for k, v in kinds.items() if k in APP)
    return kinds


def postgres_database(title: str) -> str | None:
    """The database a PostgreSQL process serves, from its process title ("postgres: 15/main: USER DB HOST(PORT)
    STATE"; the cluster name is optional); None for the server's own processes (the postmaster's title is its
    command line)."""
    if not title.startswith("postgres: "):
        return None
    rest = title[len("postgres: "):]
    if re.match(r"[^\s:]+/[^\s:]+: ", rest) or re.match(r"[^\s:]+: ", rest):  # the cluster's name
        rest = rest.split(": ", 1)[1]
    if rest.startswith("autovacuum worker"):
        words = rest.split()
        return words[2] if len(words) > 2 else None
    if rest.startswith(_SERVER_OWN):
        return None
    words = rest.split()
    return words[1] if len(words) > 1 else None


def postgres_share(title: str, database: str) -> str:
    """Whose cost a PostgreSQL process's CPU is: the load's ("postgres") or other work's ("postgres_others")."""
    served = postgres_database(title)
    return "postgres" if served is None or served == database else "postgres_others"


class Verdict(NamedTuple):
    resource: str  # "PostgreSQL quota", "shared cores", "one process", "none"
    text: str


def verdict(cpu_s: dict[str, float], seconds: float, cores: int, busy_cores: float, db_cap: float | None = None,
            throttled_share: float | None = None) -> Verdict:
    """Which resource ran out in a round: `cpu_s` the CPU seconds of each process in it (bench names), `busy_cores`
    the whole machine's busy CPUs over it (all work, the bench's and others'), `db_cap` PostgreSQL's quota in cores
    and `throttled_share` the share of its CFS periods in which it hit that quota."""
    kinds = by_kind(cpu_s)
    used = {k: v / seconds for k, v in kinds.items()}
    pg = used.get("PostgreSQL", 0.0) + used.get("PostgreSQL (other databases)", 0.0)
    parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(used.items(), key=lambda kv: -kv[1]) if v >= 0.01)
    measured = sum(v for k, v in used.items() if k != "app")
    other = max(busy_cores - measured, 0.0)
    if db_cap is not None and (pg >= AT_QUOTA * db_cap or (throttled_share or 0.0) >= THROTTLED):
        return Verdict("PostgreSQL quota", f"PostgreSQL at its quota: {pg:.2f} of {db_cap:g} cores (throttled in"
                                           f" {100 * (throttled_share or 0):.0f}% of its periods)")
    if busy_cores >= AT_QUOTA * cores:
        return Verdict("shared cores", f"the shared cores: {busy_cores:.2f} of {cores} busy ({parts};"
                                       f" other work {other:.2f})")
    single = {name: s / seconds for name, s in cpu_s.items() if kind(name) in APP}
    if single and max(single.values()) >= AT_QUOTA:
        name = max(single, key=single.get)
        return Verdict("one process", f"one process at a whole core: {name} {single[name]:.2f}")
    return Verdict("none", f"no CPU ran out ({busy_cores:.2f} of {cores} cores busy: {parts}): latency-bound")
