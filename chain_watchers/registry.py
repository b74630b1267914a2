"""The network registry: config/networks.toml loaded into frozen structs, with ${VAR:-default} from the environment."""

from __future__ import annotations

import importlib
import os
import pathlib
import re
import tomllib
from collections.abc import Mapping
from typing import Any, Literal, get_args

import msgspec

DEFAULT_FILE = pathlib.Path(__file__).resolve().parent.parent / "config" / "networks.toml"
_ENV_REF = re.compile(r"\$\{([A-Z0-9_]+)(?::-([^}]*))?\}")

Family = Literal["evm", "solana", "tron", "ton"]
FAMILIES: tuple[Family, ...] = get_args(Family)  # one watcher process each
# Each family's adapter, imported on first use: the web needs only their pure checks (addresses, hashes, links),
# not the client libraries a watcher loads with them.
_ADAPTERS: dict[Family, tuple[str, str]] = {
    "evm": ("chain_watchers.evm", "EvmAdapter"),
    "solana": ("chain_watchers.solana", "SolanaAdapter"),
    "tron": ("chain_watchers.tron", "TronAdapter"),
    "ton": ("chain_watchers.ton", "TonAdapter"),
}


def adapter_class(family: Family) -> type:
    module, name = _ADAPTERS[family]
    return getattr(importlib.import_module(module), name)


# The prefix of the transaction hashes the test helpers make up (web/api/handlers/testmode.py, the checkout page's
# simulated payment): no chain holds them, so no explorer link may point at one.
SIMULATED_TX = "test"


class UnknownNetwork(KeyError):
    """No network with that slug in the registry."""


class Stablecoin(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    address: str
    symbol: str
    decimals: int
    note: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.decimals <= 36:
            raise ValueError(f"{self.symbol}: decimals {self.decimals} out of range")


class Network(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    slug: str
    family: Family
    rpc_url: str
    confirmations: int
    testnet: bool
    # Where the watcher learns of new blocks: a websocket announcing heads (eth_subscribe "newHeads"); empty, the
    # watcher reads the head every block_time_s instead (docs/watchers.md, "Following the chain").
    ws_url: str = ""
    block_time_s: float | None = None  # the chain's usual time between blocks (slots, masterchain blocks)
    explorer_tx_url: str = ""  # "{tx_hash}" is replaced; empty where the network has no explorer
    chain_id: int | None = None
    stablecoins: tuple[Stablecoin, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        if self.confirmations < 1:
            raise ValueError(f"{self.slug}: confirmations must be at least 1")
        if (self.family == "evm") != (self.chain_id is not None):
            raise ValueError(f"{self.slug}: chain_id is required on evm networks and only there")
        if self.ws_url and self.family != "evm":
            raise ValueError(f"{self.slug}: ws_url is followed on evm networks only; {self.family} heads are read")
        if self.block_time_s is not None and self.block_time_s <= 0:
            raise ValueError(f"{self.slug}: block_time_s must be positive")

    def explorer_url(self, tx_hash: str) -> str | None:
        if not self.explorer_tx_url or tx_hash.startswith(SIMULATED_TX + "_"):
            return None
        return self.explorer_tx_url.replace("{tx_hash}", tx_hash)


class Registry(msgspec.Struct, frozen=True):
    networks: tuple[Network, ...]

    def network(self, slug: str) -> Network:
        for network in self.networks:
            if network.slug == slug:
                return network
        raise UnknownNetwork(slug)

    def of_mode(self, livemode: bool) -> tuple[Network, ...]:
        """The networks a merchant's objects of this mode live on: mainnets when live, testnets in test mode."""
        return tuple(network for network in self.networks if network.testnet != livemode)

    @property
    def slugs(self) -> tuple[str, ...]:
        return tuple(network.slug for network in self.networks)


def _expand(value: Any, env: Mapping[str, str]) -> Any:
    """Replace ${VAR} and ${VAR:-default} in every string, so secrets and local addresses stay out of the file."""
    if isinstance(value, str):
        def lookup(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in env:
                return env[name]
            if default is None:
                raise ValueError(f"environment variable {name} is not set and has no default")
            return default

        return _ENV_REF.sub(lookup, value)
    if isinstance(value, list):
        return [_expand(item, env) for item in value]
    if isinstance(value, dict):
        return {key: _expand(item, env) for key, item in value.items()}
    return value


def parse_registry(text: str, env: Mapping[str, str]) -> Registry:
    raw = _expand(tomllib.loads(text), env)
    networks = []
    for slug, entry in raw.get("networks", {}).items():
        # A stablecoin whose address expands to nothing (the local chain before a deploy) is left out.
        entry["stablecoins"] = [coin for coin in entry.get("stablecoins", []) if coin.get("address")]
        networks.append({"slug": slug, **entry})
    return msgspec.convert({"networks": networks}, Registry)


def load_registry(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Registry:
    """Load the registry from `path`, else $NETWORKS_FILE, else config/networks.toml."""
    env = os.environ if env is None else env
    chosen = pathlib.Path(path or env.get("NETWORKS_FILE") or DEFAULT_FILE)
    return parse_registry(chosen.read_text(encoding="utf-8"), env)
