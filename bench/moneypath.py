"""The money path: from the block that gives a payment its required depth to the merchant receiving the signed
`payment.settled`, through the production processes (`service web`, `actors`, `webhooks`, `watch --family evm`,
each on its own loop) and a real JSON-RPC node (ganache).

    python bench/moneypath.py                         # a block a second, 3 confirmations, reported by the page
    python bench/moneypath.py --detect scan --json    # found by the watcher's scan (the page's unique amount)
    python bench/moneypath.py --block-time 0          # a block per transaction; the depth's blocks mined at once
    python bench/moneypath.py --code DIR --legacy-registry   # the processes of another checkout (before and after)

Each payment is what a buyer does: a quick session, the hosted page read for its wallet transfer (the token, and
the amount the page quotes on the network), that transfer signed and sent, and with `--detect page` its hash
reported to the page's payment-attempts endpoint. Payments go one at a time, each after a random pause within one
block time, so they meet the watcher at every phase of its loop; then --waiting of them are sent together, to see
the load while they all wait for their depth. A payment's latency is the time from the bench's
own `newHeads` announcement of the block that completes the depth (the transaction's block + confirmations - 1) to
the signed `payment.settled` reaching the bench's receiver (its signature checked). The watcher reads the node
through a proxy that counts its JSON-RPC calls: per minute while idle (a merchant receiving, nothing open), while
the payments go one at a time, and while the --waiting payments wait. Prints p50/p95/p99/max (seconds) and the
call rates as JSON with --json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import asyncpg
from aiohttp import web
from cryptography.fernet import Fernet
from web3 import AsyncWeb3, WebSocketProvider

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from accounts import merchants  # noqa: E402
from bench.run import drop_keys, free_port, say, stop, wait_http  # noqa: E402
from chain_watchers.registry import DEFAULT_FILE, Stablecoin  # noqa: E402
from common import db  # noqa: E402
from common.secrets import Vault  # noqa: E402
from testkit.evm_node import CHAIN_ID, GAS, SLUG, Chain, Proxy, ganache, registry_toml  # noqa: E402
from testkit.signed import Signed  # noqa: E402
from webhooks import signing  # noqa: E402

SETTLED = "payment.settled"


class Moments:
    """When each of a kind of thing (a block, an order's webhook) first reached the bench, and a wait for one."""

    def __init__(self, what: str) -> None:
        self.what, self.seen, self.moved = what, {}, asyncio.Event()

    def note(self, key) -> None:
        self.seen.setdefault(key, time.monotonic())
        self.moved.set()

    async def of(self, key, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        while key not in self.seen:
            self.moved.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.moved.wait(), max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                raise TimeoutError(f"no {self.what} {key} within {timeout} s")
        return self.seen[key]


class Receiver:
    """The merchant's webhook endpoint: checks each signature, notes when each order's `payment.settled` arrived."""

    def __init__(self) -> None:
        self.secret = ""
        self.settled = Moments(f"{SETTLED} for")

    def app(self) -> web.Application:
        async def hook(request: web.Request) -> web.Response:
            body = await request.read()
            timestamp = int(request.headers[signing.TIMESTAMP_HEADER])
            if signing.sign(self.secret, timestamp, body) not in request.headers[signing.SIGNATURE_HEADER].split(","):
                return web.Response(status=400, text="bad signature")
            event = json.loads(body)
            if event["type"] == SETTLED:
                self.settled.note(event["data"]["order_id"])
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_post("/hook", hook)
        return app


class Blocks:
    """When each block's `newHeads` announcement reached the bench."""

    def __init__(self, ws_url: str) -> None:
        self.ws_url, self.announced = ws_url, Moments("announcement of block")

    async def follow(self) -> None:
        async with AsyncWeb3(WebSocketProvider(self.ws_url)) as w3:
            await w3.eth.subscribe("newHeads")
            async for message in w3.socket.process_subscriptions():
                self.announced.note(int(message["result"]["number"]))


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}"


async def page_transfer(http: aiohttp.ClientSession, base_url: str, session_key: str) -> dict:
    """The wallet transfer the hosted page offers on the bench's network: token address and call data."""
    async with http.get(f"{base_url}/c/{session_key}") as response:
        html = await response.text()
    config = json.loads(html.split('id="page-config">', 1)[1].split("</script>", 1)[0])
    [quote] = [q for q in config["quotes"] if q["network"] == SLUG]
    return quote["transfer"]


class Buyer:
    """Pays as a buyer on the hosted page does, through the service's API and pages and the node."""

    def __init__(self, args, chain: Chain, account, client: Signed, http: aiohttp.ClientSession, base_url: str):
        self.args, self.chain, self.account, self.client, self.http, self.base_url = (
            args, chain, account, client, http, base_url)

    async def pay(self, nonce: int) -> tuple[str, str]:
        """A quick session paid with the page's transfer (reported when --detect page): (order id, tx hash)."""
        status, created = await self.client.post("/b2b/v1/checkout-sessions/quick", {"amount": "10.00"})
        assert status == 201, created
        transfer = await page_transfer(self.http, self.base_url, created["session_key"])
        signed = self.account.sign_transaction({
            "to": transfer["to"], "data": transfer["data"], "nonce": nonce, "gas": GAS, "chainId": CHAIN_ID,
            "maxFeePerGas": 20 * 10**9, "maxPriorityFeePerGas": 10**9})
        tx_hash = await self.chain.send_raw(bytes(signed.raw_transaction))
        if self.args.detect == "page":
            async with self.http.post(f"{self.base_url}/c/{created['session_key']}/payment-attempts",
                                      json={"network": SLUG, "tx_hash": tx_hash}) as response:
                assert response.status == 201, await response.text()
        return created["order_id"], tx_hash

    async def nonce(self) -> int:
        return await self.chain.w3.eth.get_transaction_count(self.account.address, "pending")

    async def depth_block(self, tx_hash: str) -> int:
        receipt = await self.chain.w3.eth.wait_for_transaction_receipt(tx_hash, timeout=60, poll_latency=0.05)
        assert receipt["status"] == 1, receipt
        return receipt["blockNumber"] + self.args.confirmations - 1


async def settled_after(receiver: Receiver, blocks: Blocks, order_id: str, depth_block: int) -> float:
    """Seconds from the announcement of `depth_block` to the order's signed payment.settled."""
    depth_at = await blocks.announced.of(depth_block, timeout=60)
    return await receiver.settled.of(order_id, timeout=60) - depth_at


async def one_at_a_time(args, buyer: Buyer, blocks: Blocks, receiver: Receiver) -> list[float]:
    """Payments one after another, each after a random pause within a block time (every phase of the loop)."""
    latencies = []
    for n in range(args.payments):
        await asyncio.sleep(random.uniform(0, args.block_time or 1.0))
        order_id, tx_hash = await buyer.pay(await buyer.nonce())
        depth = await buyer.depth_block(tx_hash)
        if args.block_time == 0:
            await buyer.chain.mine(args.confirmations - 1)  # the depth's blocks at once, as on a chain that caught up
        latencies.append(await settled_after(receiver, blocks, order_id, depth))
        say(f"payment {n + 1}: {latencies[-1]:.3f} s from its depth to {SETTLED}")
    return latencies


async def all_at_once(args, buyer: Buyer, blocks: Blocks, receiver: Receiver) -> list[float]:
    """--waiting payments sent together, all waiting for their depth at the same time."""
    first = await buyer.nonce()
    paid = [await buyer.pay(first + n) for n in range(args.waiting)]
    depths = [await buyer.depth_block(tx_hash) for _, tx_hash in paid]
    if args.block_time == 0:
        await buyer.chain.mine(args.confirmations - 1)
    return [await settled_after(receiver, blocks, order_id, depth) for (order_id, _), depth in zip(paid, depths)]


def percentiles(latencies: list[float]) -> dict:
    ordered = sorted(latencies)

    def rank(p: float) -> float:  # nearest rank: a percentile is a latency some payment had
        return ordered[max(0, -(-len(ordered) * p // 100) - 1)]

    return {"p50": round(statistics.median(ordered), 3), "p95": round(rank(95), 3), "p99": round(rank(99), 3),
            "max": round(ordered[-1], 3), "min": round(ordered[0], 3)}


def per_minute(calls: list[dict], seconds: float) -> dict:
    by_method: dict[str, int] = {}
    for call in calls:
        by_method[call["method"]] = by_method.get(call["method"], 0) + 1
    return {"calls": len(calls), "seconds": round(seconds, 1),
            "calls_per_minute": round(len(calls) * 60 / seconds, 1),
            "by_method": {m: round(n * 60 / seconds, 1) for m, n in sorted(by_method.items())}}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--block-time", type=float, default=1.0,
                        help="seconds between blocks (0: a block per transaction, the depth's blocks mined at once)")
    parser.add_argument("--detect", choices=("page", "scan"), default="page",
                        help="the page reports the hash, or the watcher finds the transfer by its unique amount")
    parser.add_argument("--payments", type=int, default=30)
    parser.add_argument("--confirmations", type=int, default=3)
    parser.add_argument("--waiting", type=int, default=30,
                        help="payments then sent together, all waiting for their depth at once (RPC load)")
    parser.add_argument("--idle-seconds", type=float, default=20, help="how long idle RPC calls are counted")
    parser.add_argument("--json", action="store_true", help="print one JSON object of the figures")
    parser.add_argument("--code", default=str(ROOT), help="the checkout whose processes are measured")
    parser.add_argument("--legacy-registry", action="store_true",
                        help="write the network without ws_url and block_time_s (for a checkout that predates them)")
    parser.add_argument("--admin-url", default=os.environ.get("BENCH_DATABASE_ADMIN_URL",
                                                               "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    return parser.parse_args()


async def main() -> None:
    args = arguments()
    run = secrets.token_hex(3)
    name = f"svc_moneypath_{run}"
    admin = await asyncpg.connect(args.admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    database_url = args.admin_url.rsplit("/", 1)[0] + "/" + name
    master = Fernet.generate_key().decode()
    running: dict[str, subprocess.Popen] = {}
    servers: list[web.AppRunner] = []
    tasks: list[asyncio.Task] = []
    try:
        await db.migrate(database_url)
        pool = await db.connect(database_url, min_size=1, max_size=2)
        pair = await merchants.create(pool, Vault(master.encode()), "Moneypath")
        await pool.close()
        async with ganache(args.block_time) as node_url, aiohttp.ClientSession() as http:
            chain = await Chain(node_url).start()
            token = await chain.deploy("USDT", 6)
            payer = await chain.account()
            await chain.mint(token, payer.address, 10**15)
            wallet = await chain.account()
            while not await token.functions.balanceOf(payer.address).call():  # mined with the next block
                await asyncio.sleep(0.1)
            proxy = Proxy(node_url)  # the watcher's view of the node, every call counted
            receiver = Receiver()
            urls = []
            for app in (proxy.app(), receiver.app()):
                server, url = await serve(app)
                servers.append(server)
                urls.append(url)
            proxy_url, hook_url = urls[0], urls[1] + "/hook"
            ws_url = node_url.replace("http", "ws", 1)
            blocks = Blocks(ws_url)
            tasks.append(asyncio.create_task(blocks.follow()))

            heads = {} if args.legacy_registry else {"ws_url": ws_url, "block_time_s": args.block_time or 1.0}
            folder = tempfile.mkdtemp(prefix="moneypath")
            registry = Path(folder) / "networks.toml"
            coin = Stablecoin(address=token.address, symbol="USDT", decimals=6)
            shipped = Path(args.code) / DEFAULT_FILE.relative_to(ROOT)  # the measured checkout's own networks
            registry.write_text(shipped.read_text(encoding="utf-8") + "\n"
                                + registry_toml(proxy_url, coin, confirmations=args.confirmations, **heads))
            port = free_port()
            env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=args.redis_url, REDIS_PREFIX=f"mp{run}:",
                       SERVICE_MASTER_KEY=master, NETWORKS_FILE=str(registry), LOG_LEVEL="WARNING",
                       PYTHONPATH=args.code)
            base_url = f"http://127.0.0.1:{port}"
            for command, label in ((["web", "--port", str(port)], "web"), (["actors"], "actors"),
                                   (["webhooks"], "webhooks"), (["watch", "--family", "evm"], "watch")):
                running[label] = subprocess.Popen([sys.executable, "-m", "service", *command], env=env, cwd=args.code,
                                                  stdout=sys.stderr)
            await wait_http(base_url + "/healthz", timeout=60)

            client = Signed(http, base_url, pair.public_key, pair.secret_key, pair.merchant_id)
            status, body = await client.patch(f"/b2b/v1/merchants/{pair.merchant_id}/settings",
                                              {"receive_addresses": {SLUG: wallet.address}})
            assert status == 200, body
            status, body = await client.post(f"/b2b/v1/merchants/{pair.merchant_id}/webhook-endpoints",
                                             {"url": hook_url, "enabled_events": [SETTLED]})
            assert status == 201, body
            receiver.secret = body["secret"]

            await asyncio.sleep(5)  # the watcher's first pass opens its node and starts following heads
            say(f"idle: counting the watcher's RPC calls for {args.idle_seconds:.0f} s")
            before = len(proxy.calls)
            await asyncio.sleep(args.idle_seconds)
            idle = per_minute(proxy.calls[before:], args.idle_seconds)

            say(f"{args.payments} payments, {args.detect}, a block every {args.block_time:g} s, "
                f"{args.confirmations} confirmations")
            buyer = Buyer(args, chain, payer, client, http, base_url)
            before, started = len(proxy.calls), time.monotonic()
            latencies = await one_at_a_time(args, buyer, blocks, receiver)
            one_by_one = per_minute(proxy.calls[before:], time.monotonic() - started)
            say(f"{args.waiting} payments sent together")
            before, started = len(proxy.calls), time.monotonic()
            together = await all_at_once(args, buyer, blocks, receiver)
            waiting = per_minute(proxy.calls[before:], time.monotonic() - started)
            await chain.close()
        report = {"block_time_s": args.block_time, "detect": args.detect, "confirmations": args.confirmations,
                  "payments": args.payments, "latency_s": percentiles(latencies),
                  "waiting": args.waiting, "waiting_latency_s": percentiles(together),
                  "rpc": {"idle": idle, "one_at_a_time": one_by_one, "waiting": waiting}}
        say(f"depth to {SETTLED}: {report['latency_s']}, {args.waiting} together {report['waiting_latency_s']};"
            f" RPC calls a minute: idle {idle['calls_per_minute']}, one at a time {one_by_one['calls_per_minute']},"
            f" {args.waiting} waiting {waiting['calls_per_minute']}")
        if args.json:
            print(json.dumps(report))
    finally:
        stop(running)
        for task in tasks:
            task.cancel()
        for server in servers:
            await server.cleanup()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
        await drop_keys(args.redis_url, f"mp{run}:")


if __name__ == "__main__":
    asyncio.run(main())
