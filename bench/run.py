"""The pipeline (web, stream, actor, PostgreSQL, reply) against the design a team would build instead, measured
in the same run, on the same machine, with the same load generator.

    python bench/run.py                                  # against the peer (bench/peer.py), quick sessions
    python bench/run.py --against peer --json            # one JSON object: pipeline, peer, their rounds, ratio
    python bench/run.py --peer-mode one-statement        # the peer writing each request in one statement of its own
    python bench/run.py --mix refunds                    # merchant refunds on paid orders beside new sessions, 1:1
    python bench/run.py --no-keys                        # requests without an Idempotency-Key
    python bench/run.py --db-cpus 0.25                   # PostgreSQL held to a quarter of a core, the apps free
    python bench/run.py --wal-by-relation                # each round's WAL and bytes at rest by table and index
    python bench/run.py --prefill 5000000                # first load 5M orders over 1,000 merchants (bench/prefill.py)
    python bench/run.py --against bare --no-keys         # the old bare baseline (one INSERT, bench/baseline.py)
    python bench/run.py --against none --rounds 10 --seconds 60 --retention 120   # Redis memory over 10 minutes

The peer is the design a careful team would build instead (bench/peer.py): an aiohttp and asyncpg application of
its own, with tables of its own (the schema `peer`), that checks each request's signature, spends it in Redis and
writes all the request's changes (order, session, refund, events, outbox row, the Idempotency-Key's answer). By
default it commits in groups (`--peer-mode group-commit`): each process gathers the requests that arrive within
`--peer-window-ms` (2) or up to `--peer-batch-size` (64) and writes them in one transaction, their signatures spent
in one Redis pipeline; `--peer-mode one-statement` writes each request in one SQL statement of its own. Each
design gets the same two cores: the pipeline as `--web` web (2) and `--workers` actor (1) processes, the peer as
`--peer-processes` (2) processes sharing its port. Every request carries an Idempotency-Key of its own unless
--no-keys. Each design gets --rounds rounds, the designs taking turns, each round on processes
started for it (the speed of a shared virtual machine drifts within minutes: turns give both the same drift); each
round prints requests/s, p50, p99, peak RSS per process,
CPU per request by process (PostgreSQL, Redis and wrk included), the WAL PostgreSQL wrote per request and, after a
VACUUM of the design's tables, their size per order they hold, the machine's busy cores and which resource ran out
(bench/resources.py: PostgreSQL at its quota, the shared cores, one process at a whole core, or none); the report
keeps every round and names the median one (by requests/s) the design's figures. With --db-cpus X the PostgreSQL
server (postmaster and every backend, other databases' included: it is one server) runs in a cgroup v1 cpu group
with a quota of X cores for both designs, and is given back afterwards (bench/db_cap.py). The prefill fills the
service's tables only: the peer's start empty.
The load comes from wrk (`apt-get install wrk`) replaying pre-signed requests, so the load generator costs little
CPU; each round signs its requests afresh (signatures are accepted once, within 300 s of their timestamp).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from typing import NamedTuple

import aiohttp
import asyncpg
import psutil
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from accounts import merchants  # noqa: E402
from bench import prefill, resources, walmap  # noqa: E402
from bench.db_cap import DbCap  # noqa: E402
from bench.peer import MODES as PEER_MODES  # noqa: E402
from common import db  # noqa: E402
from common.secrets import Vault  # noqa: E402
from streams import connection  # noqa: E402
from web.edge.signing import sign  # noqa: E402

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


def _shared_cpu(database: str, redis_pid: int | None) -> dict[int, tuple[str, float]]:
    """CPU seconds so far of each shared server process, by pid, with its kind: PostgreSQL's split into the load's
    (the bench database's backends and the server's own processes) and other databases' (other work on the same
    server, bench/resources.py); of the Redis servers, the bench's alone when its pid is known (a machine may run
    others: a test cluster's nodes)."""
    found = {}
    for proc in psutil.process_iter(["name", "cmdline"]):
        name = proc.info["name"]
        if name == "postgres":
            name = resources.postgres_share(" ".join(proc.info["cmdline"] or ()), database)
        if name == "redis-server" and redis_pid not in (None, proc.pid):
            continue
        if name in SHARED or name == "postgres_others":
            found[proc.pid] = (name, _cpu(proc))
    return found


def _wrk_cpu() -> float:
    # wrk has ended (and been waited for) by the time the run is read: it counts among finished children.
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _machine_busy() -> float:
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


class RssSampler:
    """Peak RSS of each process during the run, and the CPU seconds each (and each shared server) spent in it."""

    def __init__(self, procs: dict[str, subprocess.Popen], database: str, redis_pid: int | None):
        self.procs = {name: psutil.Process(p.pid) for name, p in procs.items()}
        self.database, self.redis_pid = database, redis_pid
        self.peak = {name: 0 for name in procs}
        self.cpu_start = {name: _cpu(p) for name, p in self.procs.items()} | {"wrk": _wrk_cpu()}
        self.shared_start = _shared_cpu(database, redis_pid)
        self.machine_start, self.wall_start = _machine_busy(), time.monotonic()

    def cpu_used(self) -> dict[str, float]:
        now = {name: _cpu(p) for name, p in self.procs.items()} | {"wrk": _wrk_cpu()}
        used = {name: now[name] - start for name, start in self.cpu_start.items()}
        # By pid: a backend that ended during the round takes its CPU with it (uncounted, not subtracted), and one
        # that started in it counts from zero.
        used |= dict.fromkeys((*SHARED, "postgres_others"), 0.0)
        for pid, (kind, cpu) in _shared_cpu(self.database, self.redis_pid).items():
            used[kind] += cpu - self.shared_start.get(pid, (kind, 0.0))[1]
        return used

    def busy_cores(self) -> float:
        """The whole machine's busy CPUs since the start: the bench's processes and every other."""
        return (_machine_busy() - self.machine_start) / (time.monotonic() - self.wall_start)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            for name, proc in self.procs.items():
                try:
                    self.peak[name] = max(self.peak[name], proc.memory_info().rss)
                except psutil.Error:
                    pass
            await asyncio.sleep(0.2)


REFUND_TO = "0x1111111111111111111111111111111111111111"
PAID_ORDERS = 2000  # refunds of the refund mix go round these, 0.01 each: 1,000 fit in one order's 10.00


def session_body(tag: str, i: int) -> tuple[str, bytes]:
    return PATH, json.dumps({"amount": "10.00", "external_ref": f"bench-{tag}-{i}"}).encode()


def refund_body(pair, order_id: str, tag: str, i: int) -> tuple[str, bytes]:
    # Each body its own (its reason), as each session's external_ref: a request signed twice in one second would
    # be the same signature, refused as a replay.
    body = {"order_id": order_id, "amount": "0.01", "reason": f"bench-{tag}-{i}", "refund_to_address": REFUND_TO,
            "refund_network": "sepolia", "refund_token_address": prefill.USDT}
    return f"/b2b/v1/merchants/{pair.merchant_id}/refunds", json.dumps(body).encode()


def write_requests(path: Path, count: int, pair, tag: str, paid: list[str], keyed: bool) -> None:
    """Pre-signed requests, each with its own body, so wrk (not Python) generates the load. With paid orders
    (the refund mix), every other request refunds one of them; keyed, each carries its own Idempotency-Key."""
    ts = str(int(time.time()))
    with path.open("w") as out:
        for i in range(count):
            route, body = refund_body(pair, paid[i // 2 % len(paid)], tag, i) if paid and i % 2 else session_body(tag, i)
            key = f"bench-{tag}-{i}" if keyed else "-"
            out.write(f"{ts}\t{sign(pair.secret_key, 'POST', route, ts, body)}\t{key}\t{route}\t{body.decode()}\n")


def _ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


async def load(base_url: str, pair, args, seconds: float, tag: str, paid: list[str]) -> dict:
    requests = Path(args.workdir) / f"requests-{args.db_name}-{tag}.tsv"  # runs side by side keep apart
    write_requests(requests, int(seconds * args.max_rate), pair, tag, paid, not args.no_keys)
    env = dict(os.environ, REQUESTS_FILE=str(requests), WRK_THREADS=str(args.threads), PUBLIC_KEY=pair.public_key)
    proc = await asyncio.create_subprocess_exec(
        "wrk", f"-t{args.threads}", f"-c{args.concurrency}", f"-d{int(seconds)}s", "--latency",
        "-s", str(ROOT / "bench" / "signed.lua"), base_url, env=env, stdout=asyncio.subprocess.PIPE)
    out = (await proc.communicate())[0].decode()
    requests.unlink()
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.MULTILINE))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "requests": int(re.search(r"(\d+) requests in", out).group(1)),
            "p50_ms": _ms(latency["50"]), "p99_ms": _ms(latency["99"]),
            "errors": int(errors.group(1)) if errors else 0}


async def paid_orders(base_url: str, pair, count: int) -> list[str]:
    """Orders of 10.00, paid in full through the test-helpers route, for the refund mix to refund."""
    async with aiohttp.ClientSession(base_url) as http:
        async def post(route: str, raw: bytes) -> dict:
            ts = str(int(time.time()))
            headers = {"Content-Type": "application/json", "X-Client-ID": pair.public_key, "X-Timestamp": ts,
                       "X-Signature": sign(pair.secret_key, "POST", route, ts, raw)}
            async with http.post(route, data=raw, headers=headers) as resp:
                assert resp.status in (200, 201), (resp.status, await resp.text())
                return await resp.json()

        async def one(i: int) -> str:
            order_id = (await post(*session_body("paid", i)))["order_id"]
            await post(f"/b2b/v1/test-helpers/orders/{order_id}/payments",
                       json.dumps({"amount": "10.00", "network": "sepolia", "token_address": prefill.USDT}).encode())
            return order_id

        gate = asyncio.Semaphore(32)

        async def gated(i: int) -> str:
            async with gate:
                return await one(i)

        return list(await asyncio.gather(*(gated(i) for i in range(count))))


# Each design's tables: the service's own, or the peer's schema. The bare baseline writes into the service's orders,
# so after it the pipeline's size per order counts the baseline's rows too.
SCHEMAS = {"pipeline": "public", "peer": "peer", "bare": "public"}


async def checkpoint(conn: asyncpg.Connection) -> int:
    """Each measurement starts just after a checkpoint, at the same place in PostgreSQL's checkpoint cycle for
    either design and any database; the default max_wal_size (1 GB) then brings the next one 30 to 40 s into the
    load, so a 15 s run meets none and a 60 s run meets one or two (docs/benchmarks.md). Returns the WAL position
    the measurement starts from."""
    await conn.execute("CHECKPOINT")
    return await conn.fetchval("SELECT pg_current_wal_lsn()")  # asyncpg reads an LSN as its byte position


async def bytes_per_order(conn: asyncpg.Connection, design: str) -> float:
    """The size on disk of the design's tables (indexes and TOAST included) after a VACUUM, per order they hold."""
    schema = SCHEMAS[design]
    tables = [r["name"] for r in await conn.fetch(
        "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1", schema)]
    await conn.execute(f"VACUUM {', '.join(tables)}")
    size = await conn.fetchval("SELECT sum(pg_total_relation_size(t::regclass)) FROM unnest($1::text[]) AS t", tables)
    return size / max(await conn.fetchval(f'SELECT count(*) FROM "{schema}".orders'), 1)


async def commits(conn: asyncpg.Connection) -> int:
    """Transactions committed in the bench's database so far (pg_stat_database, read afresh)."""
    await conn.execute("SELECT pg_stat_clear_snapshot()")
    return await conn.fetchval("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")


async def measure(name, procs, url, pair, args, conn: asyncpg.Connection, tag: str, paid: list[str],
                  cap: DbCap | None) -> dict:
    """One round of a design: a short warm-up, then --seconds of load from just after a checkpoint."""
    await load(url, pair, args, 2, f"{tag}-warm", paid)
    wal_from = await checkpoint(conn)
    commits_from = await commits(conn)
    stop = asyncio.Event()
    sampler = RssSampler(procs, args.db_name, args.redis_pid)
    throttled_from = cap.stat() if cap else None
    sampling = asyncio.create_task(sampler.run(stop))
    result = await load(url, pair, args, args.seconds, tag, paid)
    stop.set()
    await sampling
    busy = sampler.busy_cores()
    used = sampler.cpu_used()
    throttled = cap.stat().since(throttled_from) if cap else None
    result["rss_mb"] = {k: round(v / 2**20, 1) for k, v in sampler.peak.items()}
    served = max(result["requests"], 1)
    ours = {k: v for k, v in used.items() if k != "postgres_others"}  # other databases' work is not the design's
    result["cpu_ms_per_request"] = {k: round(1000 * v / served, 3) for k, v in ours.items()}
    result["cpu_ms_per_request"]["all"] = round(sum(result["cpu_ms_per_request"].values()), 3)
    result["cpu_ms_per_request_by_kind"] = {k: round(1000 * v / served, 3) for k, v in resources.by_kind(ours).items()}
    result["cores_used"] = {k: round(v / args.seconds, 2) for k, v in resources.by_kind(used).items()}
    result["busy_cores"] = round(busy, 2)
    if throttled is not None:
        result["db_throttled_share"] = round(throttled.share, 3)
    found = resources.verdict(used, args.seconds, psutil.cpu_count(), busy, args.db_cpus,
                              throttled.share if throttled else None)
    result["ran_out"], result["ran_out_detail"] = found.resource, found.text
    wal_to = await conn.fetchval("SELECT pg_current_wal_lsn()")
    wal = await conn.fetchval("SELECT pg_wal_lsn_diff($2, $1)", wal_from, wal_to)
    result["wal_bytes_per_request"] = round(float(wal) / served)
    shares = []
    if args.wal_by_relation:
        try:
            shares = await walmap.wal_by_relation(conn, wal_from, wal_to)
        except asyncpg.UndefinedFileError as exc:  # checkpoints (other work's too) recycled its first segments
            say(f"{name:>9}: WAL by relation not read: {exc}")
        say(f"{name:>9}: WAL by relation\n{walmap.table(shares, served)}")
        result["wal_by_relation"] = {s.name: {"bytes": round(s.bytes / served), "fpi": round(s.fpi / served),
                                              "records": round(s.records / served, 2)} for s in shares}
    # The primary's side: how many commits the load made and how fast it wrote WAL (docs/scaling.md).
    committed = await commits(conn) - commits_from
    result["commits_per_s"] = round(committed / args.seconds)
    result["requests_per_commit"] = round(served / max(committed, 1), 2)
    result["wal_mb_per_s"] = round(float(wal) / args.seconds / 2**20, 2)
    result["bytes_per_order"] = round(await bytes_per_order(conn, name))
    if args.wal_by_relation:
        own = [s for s in shares if not s.name.startswith("(")]
        if own:
            result["wal_bytes_per_request_own"] = round(sum(s.bytes for s in own) / served)  # no other database's
        orders = max(await conn.fetchval(f'SELECT count(*) FROM "{SCHEMAS[name]}".orders'), 1)
        result["bytes_per_order_by_relation"] = {
            k: round(v / orders) for k, v in (await walmap.at_rest(conn, SCHEMAS[name])).items() if v / orders >= 1}
        say(f"{name:>9}: bytes at rest per order by relation {result['bytes_per_order_by_relation']}")
    say(f"{name:>9}: {result['rps']:8.0f} req/s  p50 {result['p50_ms']:6.1f} ms  p99 {result['p99_ms']:6.1f} ms"
        f"  errors {result['errors']}  WAL B/request {result['wal_bytes_per_request']}"
        f"  B/order {result['bytes_per_order']}  peak RSS MB {result['rss_mb']}"
        f"  CPU ms/request {result['cpu_ms_per_request_by_kind']}  ran out: {found.text}")
    return result


class Design(NamedTuple):
    name: str
    commands: list[tuple[list[str], int, str]]  # (command, processes, name prefix)
    port: int
    settle_s: float  # after its servers answer: the actors take their leases

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def alternate(designs: list[Design], env: dict, pair, args, conn: asyncpg.Connection,
                    running: dict[str, subprocess.Popen], after_round=None, cap: DbCap | None = None
                    ) -> dict[str, list[dict]]:
    """--rounds rounds of each design, the designs taking turns, each round on processes started for it: the speed
    of a shared virtual machine drifts by tens of percent within minutes, and turns give both designs the same
    drift. With the refund mix, every round of a design refunds the same paid orders, paid in its first round."""
    figures: dict[str, list[dict]] = {d.name: [] for d in designs}
    paid: dict[str, list[str]] = {}
    for n in range(args.rounds):
        for design in designs:
            procs = {}
            for command, count, prefix in design.commands:
                procs |= start(command, env, count, prefix)
            running.update(procs)
            try:
                await wait_http(design.url)
                await asyncio.sleep(design.settle_s)
                if design.name not in paid:
                    paid[design.name] = (await paid_orders(design.url, pair, PAID_ORDERS) if args.mix == "refunds"
                                         else [])
                figures[design.name].append(await measure(design.name, procs, design.url, pair, args, conn,
                                                          f"{design.name}-{n}", paid[design.name], cap))
            finally:
                stop(procs)
        if after_round is not None:
            await after_round(n)
    return figures


def median(figures: list[dict]) -> dict:
    """The round of median throughput (the slower middle one of an even count), with all its figures."""
    return sorted(figures, key=lambda f: f["rps"])[(len(figures) - 1) // 2]


def say(line: str) -> None:
    """Progress for people, on stderr: with --json, stdout holds the one JSON object alone."""
    print(line, file=sys.stderr, flush=True)


async def redis_memory(url: str) -> str:
    client = connection.connect(url)
    try:
        if connection.is_cluster(client):
            return "(a cluster: see each node's INFO)"
        return (await client.info("memory"))["used_memory_human"]
    finally:
        await client.aclose()


async def redis_pid(url: str) -> int | None:
    """The bench's Redis server's process, when it is one server on this machine; None otherwise (every
    redis-server process is then counted)."""
    client = connection.connect(url)
    try:
        if connection.is_cluster(client):
            return None
        pid = (await client.info("server"))["process_id"]
        return pid if psutil.pid_exists(pid) else None
    finally:
        await client.aclose()


async def drop_keys(url: str, prefix: str) -> None:
    client = connection.connect(url)
    try:
        async for key in client.scan_iter(match=f"{prefix}*", count=10_000):
            await client.unlink(key)
    finally:
        await client.aclose()


def start(command: list[str], env: dict, count: int, name: str) -> dict[str, subprocess.Popen]:
    """`count` processes of one command; servers among them share their port (SO_REUSEPORT). What they print goes
    to stderr, beside the bench's own progress."""
    return {f"{name}{n + 1}": subprocess.Popen(command, env=env, cwd=ROOT, stdout=sys.stderr) for n in range(count)}


def stop(procs: dict[str, subprocess.Popen]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", choices=("peer", "bare", "none"), default="peer",
                        help="the rival measured in the same run: the conventional service, the bare INSERT, or none")
    parser.add_argument("--mix", choices=("sessions", "refunds"), default="sessions",
                        help="quick sessions only, or merchant refunds on paid orders beside them, 1:1")
    parser.add_argument("--no-keys", action="store_true",
                        help="requests without an Idempotency-Key (by default each carries one of its own)")
    parser.add_argument("--prefill", type=int, default=0, metavar="N",
                        help="orders (with sessions and events, over 1,000 merchants) loaded before measuring")
    parser.add_argument("--json", action="store_true", help="print one JSON object of the figures")
    parser.add_argument("--wal-by-relation", action="store_true",
                        help="each round's WAL by table, index and TOAST (pg_walinspect, bench/walmap.py), and its"
                             " bytes at rest per order by the same")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--db-cpus", type=float, metavar="X",
                        help="hold the PostgreSQL server (postmaster and every backend) to X cores for both designs"
                             " (a cgroup v1 cpu quota; needs root), and give it back afterwards")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--workers", type=int, default=1, help="actor worker processes of the pipeline")
    parser.add_argument("--web", type=int, default=2,
                        help="web processes of the pipeline (sharing the port; one a core, as the peer's)")
    parser.add_argument("--peer-processes", type=int, default=2, help="processes of the peer (sharing the port)")
    parser.add_argument("--peer-mode", choices=PEER_MODES, default=PEER_MODES[0],
                        help="the peer commits the requests that arrive together in one transaction (group-commit)"
                             " or each request in one statement of its own (one-statement)")
    parser.add_argument("--peer-window-ms", type=float, default=2.0, help="group commit: a batch's gathering window")
    parser.add_argument("--peer-batch-size", type=int, default=64, help="group commit: the most requests in a batch")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--max-rate", type=int, default=15000, help="requests signed per second of run")
    parser.add_argument("--workdir", default="/tmp")
    parser.add_argument("--admin-url", default=os.environ.get("BENCH_DATABASE_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of --seconds of load on each design; the median one is the design's figures")
    parser.add_argument("--retention", type=int, help="STREAM_RETENTION_S of the pipeline's processes")
    parser.add_argument("--database", help="measure on this existing database (prefilled by bench/prefill.py) and"
                                           " keep it, instead of a new one")
    args = parser.parse_args()
    if args.against == "bare" and (args.mix != "sessions" or not args.no_keys):
        parser.error("the bare baseline serves quick sessions only, without Idempotency-Key (--no-keys)")
    if args.database and args.prefill:
        parser.error("--prefill makes a new database; --database measures on one made before")
    return args


async def main() -> None:
    args = arguments()
    run = secrets.token_hex(3)
    name = args.db_name = args.database or f"svc_bench_{run}"
    admin = await asyncpg.connect(args.admin_url)
    if not args.database:
        await admin.execute(f'CREATE DATABASE "{name}"')
    database_url = args.admin_url.rsplit("/", 1)[0] + "/" + name
    master = Fernet.generate_key().decode()
    report: dict = {"concurrency": args.concurrency, "seconds": args.seconds, "rounds": args.rounds, "mix": args.mix,
                    "keyed": not args.no_keys, "db_cpus": args.db_cpus, "load_before": os.getloadavg()}
    if args.against == "peer":
        report["peer_mode"] = args.peer_mode
        if args.peer_mode == "group-commit":
            report["peer_window_ms"], report["peer_batch_size"] = args.peer_window_ms, args.peer_batch_size
    running: dict[str, subprocess.Popen] = {}
    conn = None
    try:
        await db.migrate(database_url)
        conn = await asyncpg.connect(database_url)  # the bench's own: checkpoints, WAL positions, table sizes
        pool = await db.connect(database_url, min_size=1, max_size=2)
        pair = await merchants.create(pool, Vault(master.encode()), "Bench")
        if args.prefill:
            report["prefill"] = await prefill.load(pool, database_url, args.prefill, say)
        if args.database:
            report["orders_before"] = await pool.fetchval("SELECT count(*) FROM orders")
            # Each run has a master key of its own: the derivation root an earlier run sealed opens under none.
            await pool.execute("DELETE FROM service_secrets")
        await pool.close()

        env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=args.redis_url, REDIS_PREFIX=f"bench{run}:",
                   SERVICE_MASTER_KEY=master, LOG_LEVEL="WARNING")
        # The load is one merchant's: lift its rate limit the way an operator would, so the bench measures the
        # designs and not the bucket.
        await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "service", "merchants", "limits", pair.merchant_id, "--rps",
                             "1000000", "--burst", "1000000"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        keyed = ", without keys" if args.no_keys else ", each with its own Idempotency-Key"
        say(f"load: wrk, {args.concurrency} connections, {args.rounds} rounds of {args.seconds:.0f} s each, {args.mix}"
            f"{keyed}, one machine")

        def record(design: str, figures: list[dict]) -> None:
            report[design], report[design + "_rounds"] = median(figures), figures
            say(f"{design:>9}: median of {len(figures)} rounds {report[design]['rps']:.0f} req/s,"
                f" p99 {report[design]['p99_ms']:.1f} ms")

        designs = []
        if args.against != "none":
            port = free_port()
            command = [sys.executable, str(ROOT / "bench" / "baseline.py"), "--port", str(port)]
            count = 1
            if args.against == "peer":
                command = [sys.executable, str(ROOT / "bench" / "peer.py"), "--port", str(port), "--mode",
                           args.peer_mode, "--window-ms", str(args.peer_window_ms), "--batch-size",
                           str(args.peer_batch_size)]
                count = args.peer_processes
                say(f"peer: {args.peer_mode}" + (f", window {args.peer_window_ms:g} ms or {args.peer_batch_size}"
                                                 " requests" if args.peer_mode == "group-commit" else ""))
            designs.append(Design(args.against, [(command, count, args.against)], port, 0))
        if args.retention is not None:
            env["STREAM_RETENTION_S"] = str(args.retention)
        port = free_port()
        designs.append(Design("pipeline", [([sys.executable, "-m", "service", "web", "--port", str(port), "--share-port"], args.web,
                                            "web"),
                                           ([sys.executable, "-m", "service", "actors"], args.workers, "actors")],
                              port, 1.5))
        say(f"redis used_memory before: {await redis_memory(args.redis_url)}")
        args.redis_pid = await redis_pid(args.redis_url)

        async def memory(n: int) -> None:
            say(f"redis used_memory after round {n + 1} of {args.rounds}: {await redis_memory(args.redis_url)}")

        cap = None
        if args.db_cpus:
            cap = DbCap.of_server(await admin.fetchval("SHOW data_directory"), args.db_cpus)
            say(f"PostgreSQL held to {args.db_cpus:g} cores (cgroup {cap.group})")
        with cap or contextlib.nullcontext():
            rounds = await alternate(designs, env, pair, args, conn, running, memory, cap)
        for design, figures in rounds.items():
            record(design, figures)
        if args.against != "none":
            report["ratio"] = round(report["pipeline"]["rps"] / report[args.against]["rps"], 3)
            rival = f"peer ({args.peer_mode})" if args.against == "peer" else args.against
            say(f"pipeline / {rival} throughput: {report['ratio']:.2f}")
        report["load_after"] = os.getloadavg()
        say(f"load average before {report['load_before']}, after {report['load_after']}")
        if args.json:
            print(json.dumps(report))
    finally:
        stop(running)
        if conn is not None:
            await conn.close()
        if not args.database:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
        await drop_keys(args.redis_url, f"bench{run}:")


if __name__ == "__main__":
    asyncio.run(main())
