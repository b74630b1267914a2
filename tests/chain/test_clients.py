"""open_adapter: each family's client built from a registry entry (Solana and TRON run through it in their suites)."""

from __future__ import annotations

import base64
import json
import pathlib
import socket
import struct

import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from nacl.signing import SigningKey
from web3 import AsyncHTTPProvider

from chain_watchers.base import InvalidAddress
from chain_watchers.clients import open_adapter
from chain_watchers.evm import EvmAdapter
from chain_watchers.registry import load_registry

REGISTRY = load_registry(env={})


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def public_key() -> str:
    return base64.b64encode(bytes(SigningKey.generate().verify_key)).decode()


def ton_global_config(port: int) -> dict:
    """The shape of ton.org/global-config.json, with one liteserver on this machine."""
    zero = base64.b64encode(bytes(32)).decode()
    return {
        "@type": "config.global",
        "liteservers": [
            {
                "ip": struct.unpack(">i", socket.inet_aton("127.0.0.1"))[0],
                "port": port,
                "id": {"@type": "pub.ed25519", "key": public_key()},
            }
        ],
        "validator": {
            "@type": "validator.config.global",
            "init_block": {"workchain": -1, "shard": -(2**63), "seqno": 0, "root_hash": zero, "file_hash": zero},
        },
    }


async def test_evm_adapter_speaks_http_json_rpc_to_the_configured_url() -> None:
    adapter = await open_adapter(REGISTRY.network("base"))
    assert isinstance(adapter, EvmAdapter)
    assert isinstance(adapter.w3.provider, AsyncHTTPProvider)
    assert adapter.w3.provider.endpoint_uri == "https://mainnet.base.org"
    await adapter.close()


async def test_ton_adapter_reads_the_global_config_over_http_and_dials_its_liteserver() -> None:
    port = closed_port()
    app = web.Application()
    # ton.org serves the config as text/plain, so the loader must not insist on a JSON content type.
    async def config(request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(ton_global_config(port)))

    app.router.add_get("/global.config.json", config)
    async with TestServer(app) as server:
        network = msgspec.structs.replace(REGISTRY.network("ton"), rpc_url=str(server.make_url("/global.config.json")))
        with pytest.raises(ConnectionRefusedError, match=str(port)):
            await open_adapter(network)


async def test_ton_global_config_may_be_a_local_file(tmp_path: pathlib.Path) -> None:
    port = closed_port()
    path = tmp_path / "global.config.json"
    path.write_text(json.dumps(ton_global_config(port)))
    network = msgspec.structs.replace(REGISTRY.network("ton-testnet"), rpc_url=str(path))
    with pytest.raises(ConnectionRefusedError, match=str(port)):
        await open_adapter(network)


async def test_a_mistyped_stablecoin_address_fails_when_the_adapter_is_built() -> None:
    network = REGISTRY.network("ethereum")
    coin = msgspec.structs.replace(network.stablecoins[0], address="0xdAC17F958D2ee523a2206206994597C13D831Ec7")
    with pytest.raises(InvalidAddress):
        await open_adapter(msgspec.structs.replace(network, stablecoins=(coin,)))
