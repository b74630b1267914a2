"""On-chain layer: a network registry and one fact-reporting adapter per chain family (EVM, Solana, TRON, TON)."""

# The adapters and chain_watchers.clients.open_adapter load heavy client libraries, so they are imported on use.

from chain_watchers.base import (
    ChainAdapter,
    InvalidAddress,
    InvalidTxHash,
    TokenTransfer,
    TxObservation,
    UnknownToken,
)
from chain_watchers.registry import Network, Registry, Stablecoin, UnknownNetwork, load_registry
from common.money import InvalidAmount, from_base_units, to_base_units

__all__ = [
    "ChainAdapter",
    "InvalidAddress",
    "InvalidAmount",
    "InvalidTxHash",
    "Network",
    "Registry",
    "Stablecoin",
    "TokenTransfer",
    "TxObservation",
    "UnknownNetwork",
    "UnknownToken",
    "from_base_units",
    "load_registry",
    "to_base_units",
]
