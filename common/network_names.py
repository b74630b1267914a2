"""The names people know networks by ("Ethereum Sepolia", not "sepolia"): every page, mail and notification that
names a network takes its name from here; networks.toml has only slugs."""

from __future__ import annotations

# A slug missing here is shown title-cased.
NAMES = {
    "ethereum": "Ethereum", "sepolia": "Ethereum Sepolia", "polygon": "Polygon", "amoy": "Polygon Amoy",
    "bsc": "BNB Smart Chain", "bsc-testnet": "BNB Smart Chain Testnet", "arbitrum": "Arbitrum One",
    "arbitrum-sepolia": "Arbitrum Sepolia", "base": "Base", "base-sepolia": "Base Sepolia",
    "optimism": "OP Mainnet", "optimism-sepolia": "OP Sepolia", "solana": "Solana", "solana-devnet": "Solana Devnet",
    "tron": "TRON", "tron-nile": "TRON Nile", "ton": "TON", "ton-testnet": "TON Testnet", "local": "Local EVM",
}


def network_name(slug: str) -> str:
    return NAMES.get(slug) or slug.replace("-", " ").title()
