"""A real EVM JSON-RPC node for the chain tests: ganache on a free port, a proxy that can answer 429 or 5xx in front
of it, and PaymentToken deployments moved by locally signed transactions.

The adapter under test reaches the node only through the proxy, over HTTP, with the client `open_adapter` builds;
the tests drive the chain directly (deploy, mint, sign, mine, snapshot and revert).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import AsyncHTTPProvider, AsyncWeb3

from chain_watchers.registry import Network, Stablecoin

ROOT = pathlib.Path(__file__).resolve().parents[1]
GANACHE = ROOT / "tests" / "chain" / "node" / "node_modules" / ".bin" / "ganache"
ARTIFACT = json.loads((pathlib.Path(__file__).parent / "contracts" / "PaymentToken.json").read_text())
CHAIN_ID = 1337  # ganache's own default, as wallets know it
SLUG = "ganache"
CONFIRMATIONS = 3
GAS = 300_000  # explicit, so a transfer that will revert is still signed and mined (status 0)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.asynccontextmanager
async def ganache(block_time_s: float = 0) -> AsyncIterator[str]:
    """A fresh ganache chain (random accounts; a block per transaction, or one every `block_time_s` seconds when
    set); yields its URL (HTTP and websocket on one port) and stops it afterwards."""
    port = _free_port()
    process = await asyncio.create_subprocess_exec(
        str(GANACHE), "--server.host", "127.0.0.1", "--server.port", str(port), "--chain.chainId", str(CHAIN_ID),
        "--wallet.totalAccounts", "1", "--wallet.defaultBalance", "1000000", "--logging.quiet", "true",
        "--miner.blockTime", str(block_time_s),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        await _until_serving(url, process)
        yield url
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()


async def _until_serving(url: str, process: asyncio.subprocess.Process, timeout_s: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    async with aiohttp.ClientSession() as http:
        while True:
            if process.returncode is not None:
                raise RuntimeError(f"ganache exited: {(await process.stderr.read()).decode(errors='replace')}")
            with contextlib.suppress(aiohttp.ClientError):
                async with http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"}) as answer:
                    if answer.status == 200:
                        return
            if loop.time() > deadline:
                raise TimeoutError(f"ganache did not answer on {url} within {timeout_s} s")
            await asyncio.sleep(0.2)


@dataclass
class Proxy:
    """Forwards JSON-RPC to the node; `faults` holds HTTP statuses to answer instead, one per request, first first."""

    node_url: str
    faults: list[int] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)  # every JSON-RPC call that reached the node, in order
    refused: list[int] = field(default_factory=list)  # statuses answered instead of forwarding

    def app(self) -> web.Application:
        async def forward(request: web.Request) -> web.Response:
            body = await request.read()
            if self.faults:
                status = self.faults.pop(0)
                self.refused.append(status)
                # What public providers send: a 429 with Retry-After, a gateway's 5xx with an HTML page.
                if status == 429:
                    return web.json_response({"jsonrpc": "2.0", "id": None, "error": {
                        "code": -32005, "message": "daily request count exceeded, request rate limited"}},
                        status=429, headers={"Retry-After": "1"})
                return web.Response(status=status, text=f"<html><body>{status} Bad Gateway</body></html>",
                                    content_type="text/html")
            parsed = json.loads(body)
            self.calls.extend(parsed if isinstance(parsed, list) else [parsed])
            async with aiohttp.ClientSession() as http, http.post(
                self.node_url, data=body, headers={"Content-Type": "application/json"}
            ) as answer:
                return web.Response(status=answer.status, body=await answer.read(), content_type="application/json")

        app = web.Application()
        app.router.add_post("/", forward)
        return app

    def methods(self) -> list[str]:
        return [call["method"] for call in self.calls]


@dataclass
class WsProxy:
    """Forwards websocket JSON-RPC (subscriptions included) to the node; `down()` drops every connection and refuses
    new ones until `up()`, as a provider's websocket endpoint does when it restarts."""

    node_url: str
    connections: int = 0  # connections accepted so far
    refused: int = 0  # connections refused while down
    _open: set = field(default_factory=set)
    _down: bool = False

    def app(self) -> web.Application:
        async def forward(request: web.Request) -> web.StreamResponse:
            if self._down:
                self.refused += 1
                return web.Response(status=503, text="down")
            client = web.WebSocketResponse()
            await client.prepare(request)
            self.connections += 1
            async with aiohttp.ClientSession() as http, http.ws_connect(self.node_url.replace("http", "ws", 1)) as node:
                self._open.add(client)

                async def pump(source, sink) -> None:
                    async for message in source:
                        if message.type == aiohttp.WSMsgType.TEXT:
                            await sink.send_str(message.data)
                        elif message.type == aiohttp.WSMsgType.BINARY:  # ganache answers in binary frames
                            await sink.send_bytes(message.data)

                pumps = [asyncio.ensure_future(pump(client, node)), asyncio.ensure_future(pump(node, client))]
                try:
                    await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for running in pumps:
                        running.cancel()
                    self._open.discard(client)
            await client.close()
            return client

        app = web.Application()
        app.router.add_get("/", forward)
        return app

    async def down(self) -> None:
        self._down = True
        for client in list(self._open):
            await client.close()

    def up(self) -> None:
        self._down = False


class Chain:
    """The node driven directly: tokens deployed by the node's funded account, transfers signed by local keys."""

    def __init__(self, node_url: str) -> None:
        self.w3 = AsyncWeb3(AsyncHTTPProvider(node_url))

    async def start(self) -> Chain:
        [self.funder] = await self.w3.eth.accounts
        return self

    async def rpc(self, method: str, *params):
        answer = await self.w3.provider.make_request(method, list(params))
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    async def deploy(self, symbol: str, decimals: int, fee_basis_points: int = 0):
        factory = self.w3.eth.contract(abi=ARTIFACT["abi"], bytecode=ARTIFACT["bytecode"])
        tx = await factory.constructor(symbol, decimals, fee_basis_points).transact({"from": self.funder})
        receipt = await self.w3.eth.wait_for_transaction_receipt(tx)
        return self.w3.eth.contract(address=receipt["contractAddress"], abi=ARTIFACT["abi"])

    async def account(self) -> LocalAccount:
        """A new key with gas money (fresh keys per test: transaction hashes never repeat across tests)."""
        holder = Account.create()
        await self.w3.eth.send_transaction({"from": self.funder, "to": holder.address, "value": 10**18})
        return holder

    async def mint(self, token, to: str, units: int) -> None:
        await token.functions.mint(to, units).transact({"from": self.funder})

    async def sign(self, sender: LocalAccount, call, nonce: int | None = None) -> bytes:
        """A signed transaction of `call` (a contract function with its arguments), ready to send, and resend."""
        if nonce is None:
            nonce = await self.w3.eth.get_transaction_count(sender.address, "pending")
        tx = await call.build_transaction({
            "from": sender.address, "nonce": nonce, "gas": GAS, "chainId": CHAIN_ID,
            "maxFeePerGas": 20 * 10**9, "maxPriorityFeePerGas": 10**9,
        })
        return bytes(sender.sign_transaction(tx).raw_transaction)

    async def send_raw(self, raw: bytes) -> str:
        return (await self.w3.eth.send_raw_transaction(raw)).to_0x_hex()

    async def transfer(self, token, sender: LocalAccount, to: str, units: int) -> str:
        return await self.send_raw(await self.sign(sender, token.functions.transfer(to, units)))

    async def mine(self, blocks: int = 1) -> None:
        for _ in range(blocks):
            await self.rpc("evm_mine")

    async def head(self) -> int:
        return await self.w3.eth.block_number

    async def snapshot(self) -> str:
        return await self.rpc("evm_snapshot")

    async def revert(self, snapshot: str) -> None:
        assert await self.rpc("evm_revert", snapshot) is True

    async def hold_blocks(self) -> None:
        """Transactions wait in the mempool until `mine` (several can then share one block)."""
        await self.rpc("miner_stop")

    async def release_blocks(self) -> None:
        await self.rpc("miner_start")

    async def close(self) -> None:
        await self.w3.provider.disconnect()


def network(rpc_url: str, *coins: Stablecoin) -> Network:
    return Network(slug=SLUG, family="evm", rpc_url=rpc_url, confirmations=CONFIRMATIONS, testnet=True,
                   chain_id=CHAIN_ID, stablecoins=coins)


def registry_toml(rpc_url: str, *coins: Stablecoin, confirmations: int = CONFIRMATIONS, **heads: str | float) -> str:
    """The same network as an operator writes it in networks.toml, for the web layer (NETWORKS_FILE); `heads` may
    name its ws_url and block_time_s."""
    lines = [f"[networks.{SLUG}]", 'family = "evm"', f"chain_id = {CHAIN_ID}", f'rpc_url = "{rpc_url}"',
             f"confirmations = {confirmations}", "testnet = true"]
    lines += [f"{name} = {json.dumps(value)}" for name, value in heads.items()]  # a JSON string or number is TOML
    lines += ["stablecoins = ["]
    lines += [f'  {{ symbol = "{c.symbol}", address = "{c.address}", decimals = {c.decimals} }},' for c in coins]
    return "\n".join([*lines, "]", ""])


@contextlib.asynccontextmanager
async def node_behind_proxy() -> AsyncIterator[tuple[Chain, Proxy, str]]:
    """(chain, proxy, proxy URL): a fresh ganache and the proxy the adapter talks to."""
    async with ganache() as node_url:
        proxy = Proxy(node_url)
        async with TestServer(proxy.app()) as server:
            chain = await Chain(node_url).start()
            try:
                yield chain, proxy, str(server.make_url("/"))
            finally:
                await chain.close()
