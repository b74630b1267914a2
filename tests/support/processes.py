"""The service's processes as real subprocesses, and a merchant backend's patient calls to them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
from cryptography.fernet import Fernet

from accounts import merchants
from common import db
from common.secrets import Vault
from testkit.signed import Signed
from tests.conftest import ADMIN_URL, database
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
QUICK = "/b2b/v1/checkout-sessions/quick"


class Processes:
    """The processes of one deployment, with a database and key prefix of their own."""

    def __init__(self, env: dict[str, str], base_url: str, output: Path | None = None):
        self.env, self.base_url, self.output = env, base_url, output
        self.procs: dict[str, subprocess.Popen] = {}
        self._files: list = []

    def start(self, name: str, *args: str, wrap: tuple[str, ...] = (),
              env: dict[str, str] | None = None) -> subprocess.Popen:
        """With an output folder, the process writes its stdout and stderr to NAME.out and NAME.err there. `wrap`
        runs it under another command (`faketime -f -600s`); `env` adds to or overrides its environment."""
        streams = {}
        if self.output is not None:
            # Closed by stop(), once the process has ended.
            streams = {"stdout": open(self.output / f"{name}.out", "ab"),  # noqa: SIM115
                       "stderr": open(self.output / f"{name}.err", "ab")}  # noqa: SIM115
            self._files += streams.values()
        self.procs[name] = subprocess.Popen([*wrap, sys.executable, "-m", "service", *args],
                                            env=self.env | (env or {}), cwd=ROOT,
                                            **streams)
        return self.procs[name]

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for file in self._files:
            file.close()


async def until_answered(client: Signed, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            status, _ = await client.post(QUICK, {"amount": "1.00"})
            if status == 201:
                return
        except aiohttp.ClientError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the service never answered")
        await asyncio.sleep(0.2)


async def created(client: Signed, key: str, amount: str = "2.00", attempts: int = 40,
                  failed: list[tuple[int, dict | None]] | None = None, payload: dict | None = None) -> dict:
    """A quick session, retried with its Idempotency-Key through 503 and 504 answers, as a merchant's
    backend would. Concurrent calls differ in amount: the client signs identical requests a second apart.
    `failed` collects every answer other than 201; `payload` adds to the body."""
    for _ in range(attempts):
        try:
            status, body = await client.post(QUICK, {"amount": amount, **(payload or {})},
                                             headers={"Idempotency-Key": key})
        except aiohttp.ClientError:
            status, body = 0, None
        if status == 201:
            return body
        if failed is not None:
            failed.append((status, body))
        assert status in (0, 503, 504), (status, body)
        if status == 504:  # queued, not answered in time: it names the command the retry will be answered by
            assert body["error"]["code"] == "command_timeout" and body["error"]["command_id"].startswith("cmd_"), body
        await asyncio.sleep(0.25)
    raise AssertionError(f"{key} was never created")


@contextlib.asynccontextmanager
async def deployment(redis_url: str, processes: tuple[str, ...] = ("web", "actors"), *,
                     args: dict[str, tuple[str, ...]] | None = None, env: dict[str, str] | None = None,
                     output: Path | None = None, admin_url: str = ADMIN_URL,
                     wrap: dict[str, tuple[str, ...]] | None = None, answering: bool = True):
    """The named processes (an actors process may be named actors-1, actors-2...) on a database of their own (on
    admin_url's server), answering; yields them, a merchant's signed client and a pool on the database. `args`
    adds command-line arguments to the processes it names; `env` adds to or overrides their environment; with
    `output` their stdout and stderr go to files there; `wrap` runs the processes it names under a command. With
    `answering` False it yields without waiting for a first answer (a process the test starts later serves)."""
    async with database(f"svc_deploy_{secrets.token_hex(4)}", admin_url) as url:
        port = free_port()
        env = dict(os.environ, DATABASE_URL=url, REDIS_URL=redis_url, REDIS_PREFIX=f"dp{secrets.token_hex(3)}:",
                   PARTITIONS="8", LEASE_TTL_MS="1500", REPLY_TIMEOUT_S="5", PORT=str(port),
                   SERVICE_MASTER_KEY=Fernet.generate_key().decode(), LOG_LEVEL="WARNING",
                   WEBHOOK_SWEEP_INTERVAL_S="0.2", WEBHOOK_RECLAIM_IDLE_MS="500") | (env or {})
        procs = Processes(env, f"http://127.0.0.1:{port}", output)
        for name in processes:
            procs.start(name, name.split("-")[0], *(args or {}).get(name, ()), wrap=(wrap or {}).get(name, ()))
        pool = await db.connect(url, min_size=1, max_size=4)
        http = aiohttp.ClientSession()
        try:
            pair = await merchants.create(pool, Vault(env["SERVICE_MASTER_KEY"].encode()), "Deployed")
            client = Signed(http, procs.base_url, pair.public_key, pair.secret_key, pair.merchant_id)
            if answering:
                await until_answered(client)
            yield procs, client, pool
        finally:
            procs.stop()
            await http.close()
            await pool.close()
