"""Quick-session creation through the whole pipeline (web, stream, actor, PostgreSQL, reply),
beside the bare baseline (bench/baseline.py), measured in the same run on the same machine.

    python bench/run.py --concurrency 64 --seconds 15 --workers 2
    python bench/run.py --no-baseline --rounds 10 --seconds 60 --retention 120   # Redis memory over 10 minutes

Prints requests/s, p50, p99 and peak RSS per process for both, and Redis `used_memory` before and after
each round of load. The load comes from wrk (`apt-get install wrk`) replaying pre-signed requests, so
the load generator costs little CPU; each round signs its requests afresh (signatures are accepted once,
within 300 s of their timestamp).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import asyncpg
import psutil
import redis.asyncio as aioredis
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import db, merchants  # noqa: E402
from common.secrets import Vault  # noqa: E402
from web.signing import sign  # noqa: E402

PATH = "/b2b/v1/checkout-sessions/quick"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_http(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            try:
                async with http.get(url) as resp:
                    if resp.status < 500:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


# The servers and the load generator share the two cores with the measured processes: their CPU
# per request is part of what each design costs, so it is reported beside the processes' own.
SHARED = ("postgres", "redis-server")


def _cpu(proc: psutil.Process) -> float:
    try:
        times = proc.cpu_times()
    except psutil.Error:  # a PostgreSQL backend that ended during the run
        return 0.0
    return times.user + times.system


def _shared_cpu() -> dict[str, float]:
    totals = dict.fromkeys(SHARED, 0.0)
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] in totals:
            totals[proc.info["name"]] += _cpu(proc)
    # wrk has ended (and been waited for) by the time the run is read: it counts among finished children.
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return totals | {"wrk": children.ru_utime + children.ru_stime}


class RssSampler:
    """Peak RSS of each process during the run, and the CPU seconds each (and each shared server) spent in it."""

    def __init__(self, procs: dict[str, subprocess.Popen]):
        self.procs = {name: psutil.Process(p.pid) for name, p in procs.items()}
        self.peak = {name: 0 for name in procs}
        self.cpu_start = {name: _cpu(p) for name, p in self.procs.items()} | _shared_cpu()

    def cpu_used(self) -> dict[str, float]:
        now = {name: _cpu(p) for name, p in self.procs.items()} | _shared_cpu()
        return {name: now[name] - start for name, start in self.cpu_start.items()}

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            for name, proc in self.procs.items():
                try:
                    self.peak[name] = max(self.peak[name], proc.memory_info().rss)
                except psutil.Error:
                    pass
            await asyncio.sleep(0.2)


def write_requests(path: Path, count: int, pair, tag: str) -> None:
    """Pre-signed requests, each with its own body, so wrk (not Python) generates the load."""
    ts = str(int(time.time()))
    with path.open("w") as out:
        for i in range(count):
            body = json.dumps({"amount": "10.00", "external_ref": f"bench-{tag}-{i}"})
            out.write(f"{ts}\t{sign(pair.secret_key, 'POST', PATH, ts, body.encode())}\t{body}\n")


def _ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


async def load(base_url: str, pair, args, seconds: float, tag: str) -> dict:
    requests = Path(args.workdir) / f"requests-{tag}.tsv"
    write_requests(requests, int(seconds * args.max_rate), pair, tag)
    env = dict(os.environ, REQUESTS_FILE=str(requests), WRK_THREADS=str(args.threads), PUBLIC_KEY=pair.public_key,
               REQUEST_PATH=PATH)
    proc = await asyncio.create_subprocess_exec(
        "wrk", f"-t{args.threads}", f"-c{args.concurrency}", f"-d{int(seconds)}s", "--latency",
        "-s", str(ROOT / "bench" / "signed.lua"), base_url, env=env, stdout=asyncio.subprocess.PIPE)
    out = (await proc.communicate())[0].decode()
    requests.unlink()
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_ms": _ms(latency["50"]), "p99_ms": _ms(latency["99"]),
            "errors": int(errors.group(1)) if errors else 0}


async def measure(name, procs, url, pair, args, tag: str = "") -> dict:
    await wait_http(url)
    await load(url, pair, args, 2, f"{name}{tag}-warm")
    stop = asyncio.Event()
    sampler = RssSampler(procs)
    sampling = asyncio.create_task(sampler.run(stop))
    result = await load(url, pair, args, args.seconds, name + tag)
    stop.set()
    await sampling
    result["peak_rss_mb"] = {k: round(v / 2**20, 1) for k, v in sampler.peak.items()}
    served = max(result["rps"] * args.seconds, 1)
    result["cpu_ms_per_request"] = {k: round(1000 * v / served, 3) for k, v in sampler.cpu_used().items()}
    result["cpu_ms_per_request"]["all"] = round(sum(result["cpu_ms_per_request"].values()), 3)
    print(f"{name:>9}: {result['rps']:8.0f} req/s  p50 {result['p50_ms']:6.1f} ms  p99 {result['p99_ms']:6.1f} ms"
          f"  errors {result['errors']}  peak RSS MB {result['peak_rss_mb']}"
          f"  CPU ms/request {result['cpu_ms_per_request']}", flush=True)
    return result


async def redis_memory(url: str) -> str:
    client = aioredis.Redis.from_url(url)
    try:
        return (await client.info("memory"))["used_memory_human"]
    finally:
        await client.aclose()


async def drop_keys(url: str, prefix: str) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        async for key in client.scan_iter(match=f"{prefix}*", count=10_000):
            await client.unlink(key)
    finally:
        await client.aclose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--workers", type=int, default=1, help="actor worker processes")
    parser.add_argument("--web", type=int, default=1, help="web processes (sharing the port)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--max-rate", type=int, default=15000, help="requests signed per second of run")
    parser.add_argument("--workdir", default="/tmp")
    parser.add_argument("--admin-url", default=os.environ.get("BENCH_DATABASE_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--rounds", type=int, default=1, help="rounds of --seconds of load on the pipeline")
    parser.add_argument("--retention", type=int, help="STREAM_RETENTION_S of the pipeline's processes")
    parser.add_argument("--no-baseline", action="store_true", help="measure the pipeline alone")
    args = parser.parse_args()

    run = secrets.token_hex(3)
    name = f"svc_bench_{run}"
    admin = await asyncpg.connect(args.admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    database_url = args.admin_url.rsplit("/", 1)[0] + "/" + name
    master = Fernet.generate_key().decode()
    procs: list[subprocess.Popen] = []
    try:
        await db.migrate(database_url)
        pool = await db.connect(database_url, min_size=1, max_size=2)
        pair = await merchants.create(pool, Vault(master.encode()), "Bench")
        await pool.close()

        env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=args.redis_url, REDIS_PREFIX=f"bench{run}:",
                   SERVICE_MASTER_KEY=master, LOG_LEVEL="WARNING")
        if args.retention is not None:
            env["STREAM_RETENTION_S"] = str(args.retention)
        # The load is one merchant's: lift its rate limit the way an operator would, so the bench measures the
        # pipeline and not the bucket.
        subprocess.run([sys.executable, "-m", "service", "merchants", "limits", pair.merchant_id, "--rps", "1000000",
                        "--burst", "1000000"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        base_port, pipe_port = free_port(), free_port()
        baseline = subprocess.Popen([sys.executable, str(ROOT / "bench" / "baseline.py"), "--port", str(base_port)], env=env)
        procs.append(baseline)
        print(f"load: wrk, {args.concurrency} connections, {args.seconds:.0f} s each, one machine", flush=True)
        base = None
        if not args.no_baseline:
            base = await measure("baseline", {"baseline": baseline}, f"http://127.0.0.1:{base_port}", pair, args)
        baseline.terminate()
        baseline.wait()

        # Web processes share the port (SO_REUSEPORT), as `service web` scaled by count does.
        pipeline = {f"web{n + 1}": subprocess.Popen([sys.executable, "-m", "service", "web", "--port", str(pipe_port)],
                                                    env=env, cwd=ROOT) for n in range(args.web)}
        for n in range(args.workers):
            pipeline[f"actors{n + 1}"] = subprocess.Popen([sys.executable, "-m", "service", "actors"], env=env, cwd=ROOT)
        procs += pipeline.values()
        await asyncio.sleep(1.5)  # leases
        print(f"redis used_memory before: {await redis_memory(args.redis_url)}", flush=True)
        for round_ in range(args.rounds):
            full = await measure("pipeline", pipeline, f"http://127.0.0.1:{pipe_port}", pair, args, f"-{round_}")
            print(f"redis used_memory after round {round_ + 1} of {args.rounds}: {await redis_memory(args.redis_url)}",
                  flush=True)
        if base is not None:
            print(f"pipeline / baseline throughput: {full['rps'] / base['rps']:.2f}", flush=True)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
        await drop_keys(args.redis_url, f"bench{run}:")


if __name__ == "__main__":
    asyncio.run(main())
