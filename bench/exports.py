"""Export benchmark: N orders of one merchant exported through a real `service web` process, measuring rows per
second and the web process's resident memory (sampled during the export, and its peak, VmHWM), which must stay flat
whatever N is: the export reads a server-side cursor a page at a time and writes as it reads.

The orders are one template order (a quick session paid in full, decided and committed as the actors do, from
bench/prefill.py) copied N times straight into `orders`, each with its own id, number and creation time. Not a test:
run it by hand and report the figures (docs/benchmarks.md).

    python bench/exports.py 1000000                # orders, CSV and JSON Lines
    python bench/exports.py 100000 --format csv    # a smaller run
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import asyncpg
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from accounts import merchants  # noqa: E402
from bench.prefill import template  # noqa: E402
from common import db  # noqa: E402
from common.secrets import Vault  # noqa: E402
from web.edge.signing import sign  # noqa: E402

CHUNK = 100_000
# Copies g of the template order $1, one every 6 s further back: ids, numbers and paid times of their own.
_COPY = """
INSERT INTO orders (order_id, merchant_id, livemode, order_number, status, external_ref, state, version, created_at,
                    updated_at, state_schema, paid_at)
SELECT n.order_id, t.merchant_id, t.livemode, t.order_number + g,  t.status, 'INV-' || g,
       jsonb_set(replace(t.state::text, t.order_id, n.order_id)::jsonb, '{order_number}', to_jsonb(t.order_number + g)),
       t.version, t.created_at - g * interval '6 seconds', t.created_at - g * interval '6 seconds', t.state_schema,
       t.paid_at - g * interval '6 seconds'
FROM generate_series($2::bigint, $3::bigint) AS g, orders t,
     LATERAL (SELECT 'ord_' || substr(md5('o' || g), 1, 36) AS order_id) AS n
WHERE t.order_id = $1
"""


def rss_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


async def fill(url: str, vault: Vault, count: int) -> tuple[str, str, str]:
    pool = await db.connect(url, min_size=1, max_size=2)
    try:
        pair = await merchants.create(pool, vault, "Export bench", False)
        ids = await template(pool, pair.merchant_id)
        started = time.monotonic()
        for first in range(1, count, CHUNK):
            await pool.execute(_COPY, ids["order"], first, min(first + CHUNK - 1, count - 1))
        await pool.execute("VACUUM (ANALYZE) orders")
        print(f"filled {count:,} orders in {time.monotonic() - started:.0f} s", flush=True)
        return pair.merchant_id, pair.public_key, pair.secret_key
    finally:
        await pool.close()


async def export(base: str, merchant_id: str, public: str, secret: str, fmt: str, pid: int) -> dict:
    path = f"/b2b/v1/merchants/{merchant_id}/exports/orders?format={fmt}"
    ts = str(int(time.time()))
    headers = {"X-Client-ID": public, "X-Timestamp": ts, "X-Signature": sign(secret, "GET", path, ts, b"")}
    before = rss_kib(pid)
    samples, lines, size = [], 0, 0
    started = time.monotonic()
    timeout = aiohttp.ClientTimeout(total=None, sock_read=600)
    async with aiohttp.ClientSession(timeout=timeout) as http, http.get(base + path, headers=headers) as resp:
        assert resp.status == 200, await resp.text()
        async for chunk in resp.content.iter_chunked(1 << 16):
            lines += chunk.count(b"\n")
            size += len(chunk)
            if len(samples) < (time.monotonic() - started) * 5:
                samples.append(rss_kib(pid)["VmRSS"])
    took = time.monotonic() - started
    rows = lines - (1 if fmt == "csv" else 0)
    after = rss_kib(pid)
    return {"format": fmt, "rows": rows, "seconds": round(took, 1), "rows_per_s": round(rows / took),
            "mib": round(size / 2**20, 1), "rss_before_mib": round(before["VmRSS"] / 1024, 1),
            "rss_during_max_mib": round(max(samples or [after["VmRSS"]]) / 1024, 1),
            "rss_peak_hwm_mib": round(after["VmHWM"] / 1024, 1)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("orders", type=int, nargs="?", default=1_000_000)
    parser.add_argument("--format", choices=("csv", "jsonl", "both"), default="both")
    parser.add_argument("--port", type=int, default=8097)
    parser.add_argument("--admin-url", default=os.environ.get("BENCH_DATABASE_ADMIN_URL",
                                                              "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    args = parser.parse_args()
    name = f"svc_bench_exports_{secrets.token_hex(3)}"
    admin = await asyncpg.connect(args.admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = args.admin_url.rsplit("/", 1)[0] + "/" + name
    master = Fernet.generate_key().decode()
    web = None
    try:
        await db.migrate(url)
        merchant_id, public, secret = await fill(url, Vault(master.encode()), args.orders)
        env = {**os.environ, "DATABASE_URL": url, "REDIS_URL": args.redis_url, "SERVICE_MASTER_KEY": master,
               "REDIS_PREFIX": f"bench-exports-{secrets.token_hex(3)}:", "PORT": str(args.port),
               "PYTHONPATH": str(ROOT)}
        web = subprocess.Popen([sys.executable, "-m", "service", "web"], env=env, cwd=ROOT)
        base = f"http://127.0.0.1:{args.port}"
        async with aiohttp.ClientSession() as http:
            for _ in range(100):
                try:
                    async with http.get(base + "/healthz") as resp:
                        if resp.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.2)
        for fmt in (("csv", "jsonl") if args.format == "both" else (args.format,)):
            print(await export(base, merchant_id, public, secret, fmt, web.pid), flush=True)
    finally:
        if web is not None:
            web.terminate()
            web.wait(timeout=10)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main())
