"""The HA suite's fixtures: one Patroni cluster for the module, and the service's processes on it."""

from __future__ import annotations

import pytest

from tests.conftest import REDIS_URL
from tests.ha.cluster import Cluster, missing_tools
from tests.support.processes import deployment, free_port

PROCESSES = ("web", "actors-1", "actors-2", "scheduler", "webhooks", "cards", "watch")
WORKERS = PROCESSES[1:]  # the processes that serve their probes on a metrics port of their own
FAMILY = ("--family", "evm")  # a watcher, for its probes: no merchant receives on a network here


@pytest.fixture(scope="module")
async def cluster():
    missing = missing_tools()
    if missing:  # never skipped: a machine without them fails, so CI cannot pass without this suite
        pytest.fail(f"the HA tools are missing ({', '.join(missing)}); .ci/ha-tools installs them")
    started = Cluster()
    try:
        started.start()
        await started.healthy(90)
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
async def service(cluster, tmp_path_factory):
    ports = {name: free_port() for name in WORKERS}
    args = {n: ("--metrics-port", str(p), *(FAMILY if n == "watch" else ())) for n, p in ports.items()}
    async with deployment(REDIS_URL, PROCESSES, args=args,
                          env={"RATE_LIMIT_RPS": "100000", "RATE_LIMIT_BURST": "100000"}, admin_url=cluster.url, output=tmp_path_factory.mktemp("ha-logs")) as (procs, client, pool):
        probes = {"web": procs.base_url} | {n: f"http://127.0.0.1:{p}" for n, p in ports.items()}
        yield procs, client, pool, probes
