"""The network registry as the web reads it, loaded once: networks by slug, and what a stablecoin is called."""

from __future__ import annotations

from functools import lru_cache

from chain_watchers import Network, Registry, UnknownNetwork, UnknownToken, load_registry
from chain_watchers.registry import adapter_class


@lru_cache(maxsize=1)
def registry() -> Registry:
    return load_registry()


def network(slug: str) -> Network | None:
    try:
        return registry().network(slug)
    except UnknownNetwork:
        return None


def symbol(slug: str, token_address: str) -> str:
    """The stablecoin's symbol; its address where the network or the token is not one the registry knows."""
    net = network(slug)
    if net is None:
        return token_address
    try:
        return adapter_class(net.family).stablecoin(net, token_address).symbol
    except (UnknownToken, ValueError):
        return token_address
