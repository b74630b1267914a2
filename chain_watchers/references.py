"""What ties a hashless payment to its session on Solana and TON: values derived from the session id alone."""

from __future__ import annotations

import hashlib

from solders.pubkey import Pubkey

from chain_watchers.registry import Network


def reference(network: Network, session_id: str) -> str | None:
    """The Solana Pay reference key or the TON comment the page puts in its link; None on other families.

    Both derive from the session id alone, so the watcher recomputes them from the sessions it watches.
    """
    if network.family == "solana":
        return str(Pubkey.from_bytes(hashlib.sha256(f"solana-pay-reference:{session_id}".encode()).digest()))
    if network.family == "ton":
        return session_id
    return None
