"""Webhook deliveries per second to a local receiver that answers at once, beside that receiver's own
ceiling, measured in the same run on the same machine.

    python bench/webhooks.py --events 20000 --endpoints 4 --rate 500 --paced-seconds 10

The receiver runs in its own process. Its ceiling comes from wrk posting the same bodies. Then the
real `service webhooks` process (its own Redis prefix and database) delivers: events are appended
to the events stream in one burst, and the clock runs until every delivery is recorded succeeded
in PostgreSQL (written to the table, signed, sent, answered, logged). Then events arrive at a steady
`--rate` for `--paced-seconds`, and the receiver measures each delivery's latency from the moment its
event was appended to the events stream, which is where an event lands once its order's batch has
committed (the outbox is only the fallback of a crash between the two): p50 and p99.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import aiohttp
import asyncpg
import msgspec
import redis.asyncio as aioredis
from aiohttp import web
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from run import free_port, wait_http  # noqa: E402  (bench/run.py)

from accounts import merchants  # noqa: E402
from actors.publication import PublicEvent  # noqa: E402
from common import db  # noqa: E402
from common.clock import iso  # noqa: E402
from common.secrets import Vault  # noqa: E402
from streams.names import Keys  # noqa: E402
from webhooks import endpoints  # noqa: E402

_encode = msgspec.json.Encoder().encode


def serve_receiver(port: int) -> None:
    """The merchant's endpoint: 200 at once, a count at GET /count, and at GET /latency the delivery latencies of
    the timed events received since the last call (an event's id carries the time it was appended)."""
    seen = {"n": 0}
    latencies_ms: list[float] = []

    async def hook(request: web.Request) -> web.Response:
        arrived = time.time_ns()
        sent = msgspec.json.decode(await request.read())["id"].partition("_at")[2]
        if sent:
            latencies_ms.append((arrived - int(sent)) / 1e6)
        seen["n"] += 1
        return web.Response(text="ok")

    async def count(request: web.Request) -> web.Response:
        return web.Response(text=str(seen["n"]))

    async def latency(request: web.Request) -> web.Response:
        ordered = sorted(latencies_ms)
        latencies_ms.clear()
        def at(q: float) -> float | None:
            return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1) if ordered else None

        return web.json_response({"deliveries": len(ordered), "p50_ms": at(0.50), "p99_ms": at(0.99)})

    app = web.Application()
    app.router.add_post("/hook", hook)
    app.router.add_get("/count", count)
    app.router.add_get("/latency", latency)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def event(merchant_id: str, n: int, timed: bool = False) -> PublicEvent:
    """A payment.settled of the usual size; a timed one carries the time it is appended in its id."""
    order_id = f"ord_bench{n:08d}"
    return PublicEvent(
        id=f"evt_bench{n:08d}_at{time.time_ns()}" if timed else f"evt_bench{secrets.token_hex(8)}",
        type="payment.settled", created_at=iso(datetime.now(timezone.utc)),
        livemode=False, merchant_id=merchant_id, order_id=order_id, seq=5,
        data={"order_id": order_id, "order_number": str(1000 + n), "order_status": "PAID", "amount_paid": "25.00"},
    )


async def receiver_ceiling(url: str, body: bytes, seconds: int, connections: int) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(f'wrk.method = "POST"\nwrk.body = {msgspec.json.encode(body.decode()).decode()}\n'
                     'wrk.headers["Content-Type"] = "application/json"\n')
    proc = await asyncio.create_subprocess_exec("wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", script.name,
                                                url, stdout=asyncio.subprocess.PIPE)
    out = (await proc.communicate())[0].decode()
    os.unlink(script.name)
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith("Requests/sec")))


async def delivered(pool: asyncpg.Pool, expected: int, started: float, timeout: float) -> int:
    done = 0
    while done < expected and time.monotonic() - started < timeout:
        await asyncio.sleep(0.1)
        done = await pool.fetchval("SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'")
    return done


async def paced(redis: aioredis.Redis, stream: str, merchant_id: str, args) -> int:
    """`--rate` timed events a second for `--paced-seconds`, appended every 10 ms; returns how many."""
    sent, started = 0, time.monotonic()
    while (elapsed := time.monotonic() - started) < args.paced_seconds:
        due = int(elapsed * args.rate) - sent
        if due > 0:
            async with redis.pipeline(transaction=False) as pipe:
                for n in range(sent, sent + due):
                    pipe.xadd(stream, {"e": _encode(event(merchant_id, args.events + n, timed=True))})
                await pipe.execute()
            sent += due
        await asyncio.sleep(0.01)
    return sent


async def deliver(args, database_url: str, redis_url: str, master: str, hook_url: str) -> tuple[int, float, int]:
    prefix = f"benchhooks{secrets.token_hex(3)}:"
    pool = await db.connect(database_url, min_size=1, max_size=2)
    vault = Vault(master.encode())
    pair = await merchants.create(pool, vault, "Bench")
    async with pool.acquire() as conn:
        for _ in range(args.endpoints):
            await endpoints.create(conn, vault, pair.merchant_id, False, hook_url, ["*"], None,
                                   datetime.now(timezone.utc))
    env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=redis_url, REDIS_PREFIX=prefix,
               SERVICE_MASTER_KEY=master, LOG_LEVEL="WARNING")
    proc = subprocess.Popen([sys.executable, "-m", "service", "webhooks"], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    redis = aioredis.Redis.from_url(redis_url)
    try:
        await asyncio.get_running_loop().run_in_executor(None, proc.stdout.readline)  # ready
        stream = Keys(prefix, 16).events
        expected = args.events * args.endpoints
        started = time.monotonic()
        for chunk in range(0, args.events, 1000):
            async with redis.pipeline(transaction=False) as pipe:
                for n in range(chunk, min(chunk + 1000, args.events)):
                    pipe.xadd(stream, {"e": _encode(event(pair.merchant_id, n))})
                await pipe.execute()
        done = await delivered(pool, expected, started, args.timeout)
        elapsed = time.monotonic() - started
        timed = await paced(redis, stream, pair.merchant_id, args)
        await delivered(pool, expected + timed * args.endpoints, time.monotonic(), args.timeout)
        return done, elapsed, timed
    finally:
        proc.terminate()
        proc.wait(15)
        keys = [k async for k in redis.scan_iter(match=f"{prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
        await pool.close()


async def latency(port: int) -> dict:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/latency") as resp:
        return await resp.json()


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--endpoints", type=int, default=4, help="endpoints of one merchant, all on the receiver")
    parser.add_argument("--seconds", type=int, default=10, help="length of the receiver's ceiling run")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--rate", type=int, default=500, help="timed events per second after the burst")
    parser.add_argument("--paced-seconds", type=float, default=10, help="how long the timed events arrive")
    parser.add_argument("--receiver", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--admin-url", default=os.environ.get("BENCH_DATABASE_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    return parser.parse_args()


async def main(args: argparse.Namespace) -> None:
    port = free_port()
    receiver = subprocess.Popen([sys.executable, __file__, "--receiver", str(port)])
    name = f"svc_bench_{secrets.token_hex(3)}"
    admin = await asyncpg.connect(args.admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    database_url = args.admin_url.rsplit("/", 1)[0] + "/" + name
    try:
        await db.migrate(database_url)
        hook_url = f"http://127.0.0.1:{port}/hook"
        await wait_http(f"http://127.0.0.1:{port}/count")
        body = _encode({"id": "evt_x", "type": "payment.settled", "created_at": iso(datetime.now(timezone.utc)),
                        "livemode": False, "data": event("mer_bench", 0).data})
        ceiling = await receiver_ceiling(hook_url, body, args.seconds, args.connections)
        print(f"receiver ceiling (wrk, {args.connections} connections): {ceiling:8.0f} requests/s", flush=True)
        await latency(port)  # forget the ceiling run's bodies
        done, elapsed, timed = await deliver(args, database_url, args.redis_url, Fernet.generate_key().decode(),
                                             hook_url)
        rate = done / elapsed
        print(f"webhooks process: {done} deliveries ({args.events} events x {args.endpoints} endpoints)"
              f" in {elapsed:.1f} s = {rate:8.0f} deliveries/s  ({rate / ceiling:.0%} of the receiver's ceiling)",
              flush=True)
        found = await latency(port)
        print(f"latency from the events stream to the receiver at {args.rate} events/s x {args.endpoints} endpoints"
              f" ({timed} events, {found['deliveries']} deliveries): p50 {found['p50_ms']} ms, p99 {found['p99_ms']} ms",
              flush=True)
    finally:
        receiver.terminate()
        receiver.wait(10)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    options = arguments()
    if options.receiver:
        serve_receiver(options.receiver)
    else:
        asyncio.run(main(options))
