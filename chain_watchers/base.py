"""The chain adapter contract: fact structs, format errors and the ChainAdapter Protocol."""

from __future__ import annotations

import abc
from typing import Protocol

import msgspec

from chain_watchers.registry import Network, Stablecoin

# keccak("Transfer(address,address,uint256)"): the Transfer event of ERC-20 tokens, which TRC-20 tokens emit too.
TRANSFER_TOPIC = bytes.fromhex("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")


class InvalidAddress(ValueError):
    """An address is not well formed for the network's family."""


class InvalidTxHash(ValueError):
    """A transaction hash is not well formed for the network's family."""


class UnknownToken(ValueError):
    """A token address is not one of the network's configured stablecoins."""


class BlockNotAvailable(Exception):
    """The node asked cannot serve a block the chain already has (a load-balanced endpoint's lagging node)."""


class TokenTransfer(msgspec.Struct, frozen=True, kw_only=True):
    """One token movement seen in a transaction; addresses are in the family's normal form."""

    token_address: str
    from_address: str | None  # None where the chain does not name one sender (Solana many-to-one moves)
    to_address: str
    amount_base_units: int
    ordinal: int  # EVM log index, TRON log position, Solana account index, TON 0
    memo: str | None = None  # text comment carried with the transfer (TON forward payload)


class SeenTransfer(msgspec.Struct, frozen=True, kw_only=True):
    """A transfer met while reading a chain forward (no hash in hand): a lead that `fetch` then verifies."""

    tx_hash: str
    position: int  # block number (EVM, TRON) or logical time (TON): where a scan cursor can resume
    transfer: TokenTransfer


class TxObservation(msgspec.Struct, frozen=True, kw_only=True):
    """What one network says about one transaction at one moment: facts only, never a state."""

    network: str
    tx_hash: str
    found: bool
    success: bool | None  # None while not executed (unknown or still in the mempool)
    confirmations: int  # blocks (slots on Solana) from the transaction's block to the head, inclusive
    final: bool  # the chain's own finality (where it has one) and at least the configured depth
    transfers: tuple[TokenTransfer, ...] = ()
    block_ref: str | None = None  # block number, slot, or TON shard block id
    reason: str | None = None  # why not found, not final, or failed, for people reading logs


class ChainAdapter(Protocol):
    """One chain family behind one interface; it reports facts and never decides states."""

    network: Network

    @staticmethod
    def validate_address(address: str) -> str:
        """Return the address in normal form, or raise InvalidAddress."""
        ...

    @staticmethod
    def validate_tx_hash(tx_hash: str) -> str:
        """Return the hash in normal form, or raise InvalidTxHash."""
        ...

    async def fetch(self, tx_hash: str, *, account: str | None = None) -> TxObservation:
        """Observe a transaction; `account` says where to look on chains that cannot find a hash alone (TON)."""
        ...

    async def head(self) -> int:
        """The chain's newest block (slot, masterchain seqno): the unit `confirmations` counts in."""
        ...

    def payment_link(
        self, to_address: str, token_address: str, amount_base_units: int, reference: str | None = None
    ) -> str | None:
        """A wallet deep link (for a QR code) paying a stablecoin, or None where the network has no standard."""
        ...

    async def close(self) -> None:
        """Release the client's connections."""
        ...


class AdapterBase(abc.ABC):
    """Behaviour every adapter shares: the network it serves and how observations are assembled."""

    def __init__(self, network: Network, family: str) -> None:
        if network.family != family:
            raise ValueError(f"network {network.slug!r} is {network.family}, not {family}")
        for coin in network.stablecoins:  # an operator's typo in networks.toml fails at start, not at payment time
            self.validate_address(coin.address)
        self.network = network

    @staticmethod
    @abc.abstractmethod
    def validate_address(address: str) -> str:
        """Each family's own rule; the shared code below compares addresses only in normal form."""

    @classmethod
    def stablecoin(cls, network: Network, token_address: str) -> Stablecoin:
        """The network's configured stablecoin at this address, compared in normal form (no client needed)."""
        wanted = cls.validate_address(token_address)
        for coin in network.stablecoins:
            if cls.validate_address(coin.address) == wanted:
                return coin
        raise UnknownToken(f"{token_address} is not a stablecoin configured on {network.slug}")

    def not_found(self, tx_hash: str, reason: str) -> TxObservation:
        return TxObservation(
            network=self.network.slug, tx_hash=tx_hash, found=False, success=None, confirmations=0, final=False,
            reason=reason,
        )

    def observed(
        self,
        tx_hash: str,
        *,
        success: bool | None,
        confirmations: int,
        chain_final: bool,
        transfers: tuple[TokenTransfer, ...],
        block_ref: str | None,
        reason: str | None = None,
    ) -> TxObservation:
        """An observation of a known transaction; final needs the chain's verdict and the configured depth."""
        deep_enough = confirmations >= self.network.confirmations
        if reason is None and not (chain_final and deep_enough):
            reason = f"{confirmations} of {self.network.confirmations} confirmations"
            if deep_enough:
                reason += "; the chain does not yet call it final"
        return TxObservation(
            network=self.network.slug,
            tx_hash=tx_hash,
            found=True,
            success=success,
            confirmations=confirmations,
            final=success is not None and chain_final and deep_enough,
            transfers=transfers,
            block_ref=block_ref,
            reason=reason,
        )
