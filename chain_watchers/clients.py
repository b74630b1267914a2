"""Build the adapter for a registry network on the family's own client library."""

from __future__ import annotations

import json
import pathlib

import aiohttp
from pytoniq import LiteClient
from solana.rpc.async_api import AsyncClient
from tronpy import AsyncTron
from tronpy.providers.async_http import AsyncHTTPProvider as TronHTTPProvider
from web3 import AsyncHTTPProvider, AsyncWeb3

from chain_watchers.base import ChainAdapter
from chain_watchers.evm import EvmAdapter
from chain_watchers.registry import Network
from chain_watchers.solana import SolanaAdapter
from chain_watchers.ton import TonAdapter
from chain_watchers.tron import TronAdapter


async def open_adapter(network: Network) -> ChainAdapter:
    """An adapter ready to fetch; the caller closes it with `await adapter.close()`."""
    if network.family == "evm":
        return EvmAdapter(network, AsyncWeb3(AsyncHTTPProvider(network.rpc_url)))
    if network.family == "solana":
        return SolanaAdapter(network, AsyncClient(network.rpc_url))
    if network.family == "tron":
        return TronAdapter(network, AsyncTron(TronHTTPProvider(network.rpc_url)))
    client = LiteClient.from_config(await _ton_config(network.rpc_url), ls_i=0, trust_level=1)
    adapter = TonAdapter(network, client)  # built before connecting, so a bad stablecoin address fails first
    await client.connect()
    return adapter


async def _ton_config(location: str) -> dict:
    """TON's global config (liteservers and their keys) from a URL or a local file."""
    if not location.startswith(("http://", "https://")):
        return json.loads(pathlib.Path(location).read_text(encoding="utf-8"))
    async with aiohttp.ClientSession() as session, session.get(location) as response:
        response.raise_for_status()
        return await response.json(content_type=None)  # ton.org serves it as text/plain
