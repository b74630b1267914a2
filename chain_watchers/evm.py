"""EVM family adapter on web3's AsyncWeb3: ERC-20 Transfer logs, depth from the latest block, EIP-681 links."""

from __future__ import annotations

import functools
import re

from web3 import AsyncWeb3, Web3
from web3.exceptions import TransactionNotFound

from chain_watchers.base import (
    TRANSFER_TOPIC,
    AdapterBase,
    InvalidAddress,
    InvalidTxHash,
    SeenTransfer,
    TokenTransfer,
    TxObservation,
)
from chain_watchers.registry import Network

# The topic ignores which arguments are indexed, and raw LOG opcodes can emit anything, so only ERC-20's layout
# counts: from and to as topics, the value alone in 32 bytes of data.
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_HASH = re.compile(r"0x[0-9a-fA-F]{64}")


class EvmAdapter(AdapterBase):
    def __init__(self, network: Network, w3: AsyncWeb3) -> None:
        super().__init__(network, "evm")
        self.w3 = w3

    @staticmethod
    @functools.lru_cache(maxsize=4096)  # a keccak per call; refunds and quotes name the same few addresses again
    def validate_address(address: str) -> str:
        """0x + 40 hex. One-case hex carries no checksum (EIP-55) and is accepted; mixed case must be the checksum."""
        if not _ADDRESS.fullmatch(address):
            raise InvalidAddress(f"{address!r} is not 0x followed by 40 hex digits")
        body = address[2:]
        mixed_case = body != body.lower() and body != body.upper()
        if mixed_case and not Web3.is_checksum_address(address):
            raise InvalidAddress(f"{address!r} fails its EIP-55 checksum (mistyped?)")
        return Web3.to_checksum_address(address)

    @staticmethod
    def validate_tx_hash(tx_hash: str) -> str:
        if not _HASH.fullmatch(tx_hash):
            raise InvalidTxHash(f"{tx_hash!r} is not 0x followed by 64 hex digits")
        return tx_hash.lower()

    async def fetch(self, tx_hash: str, *, account: str | None = None) -> TxObservation:
        tx_hash = self.validate_tx_hash(tx_hash)
        try:
            receipt = await self.w3.eth.get_transaction_receipt(tx_hash)
        except TransactionNotFound:
            return await self._unmined(tx_hash)
        latest = await self.w3.eth.block_number
        success = receipt["status"] == 1
        return self.observed(
            tx_hash,
            success=success,
            confirmations=max(0, latest - receipt["blockNumber"] + 1),
            chain_final=True,  # EVM finality here is depth alone; see docs/networks.md
            transfers=tuple(_transfers(receipt["logs"])),
            block_ref=str(receipt["blockNumber"]),
            reason=None if success else "failed: reverted (receipt status 0)",
        )

    async def _unmined(self, tx_hash: str) -> TxObservation:
        """No receipt: either waiting in the mempool or unknown to this node."""
        try:
            tx = await self.w3.eth.get_transaction(tx_hash)
        except TransactionNotFound:
            return self.not_found(tx_hash, "no such transaction on this network")
        block = tx.get("blockNumber")
        if block is not None:
            # Load-balanced providers: the backend that answered has the block, the one asked for the receipt not yet.
            # Unexecuted as far as we know, but in a block: not the mempool, and no reorganisation took it out.
            return self.observed(
                tx_hash, success=None, confirmations=0, chain_final=False, transfers=(), block_ref=str(block),
                reason=f"in block {block}; the node has no receipt for it yet",
            )
        return self.observed(
            tx_hash, success=None, confirmations=0, chain_final=False, transfers=(), block_ref=None,
            reason="pending: not yet in a block",
        )

    async def head(self) -> int:
        return await self.w3.eth.block_number

    async def transfers_to(self, recipients: list[str], from_block: int, to_block: int) -> list[SeenTransfer]:
        """Stablecoin Transfer logs to any of `recipients` in the block range, inclusive (one eth_getLogs)."""
        to_topics = ["0x" + bytes(12).hex() + self.validate_address(r)[2:].lower() for r in recipients]
        logs = await self.w3.eth.get_logs({
            "fromBlock": from_block, "toBlock": to_block,
            "address": [self.validate_address(coin.address) for coin in self.network.stablecoins],
            "topics": ["0x" + TRANSFER_TOPIC.hex(), None, to_topics],
        })
        return [
            SeenTransfer(tx_hash="0x" + bytes(log["transactionHash"]).hex(), position=log["blockNumber"],
                         transfer=transfer)
            for log in logs
            for transfer in _transfers([log])
        ]

    def payment_link(
        self, to_address: str, token_address: str, amount_base_units: int, reference: str | None = None
    ) -> str:
        """EIP-681 ERC-20 transfer; the standard has no memo field, so `reference` is not carried."""
        token = self.validate_address(self.stablecoin(self.network, token_address).address)
        to = self.validate_address(to_address)
        return f"ethereum:{token}@{self.network.chain_id}/transfer?address={to}&uint256={amount_base_units}"

    async def close(self) -> None:
        await self.w3.provider.disconnect()


def _transfers(logs: list) -> list[TokenTransfer]:
    found = []
    for log in logs:
        topics = log["topics"]
        if len(topics) != 3 or bytes(topics[0]) != TRANSFER_TOPIC or len(log["data"]) != 32:
            continue
        found.append(
            TokenTransfer(
                token_address=Web3.to_checksum_address(log["address"]),
                from_address=Web3.to_checksum_address(bytes(topics[1])[-20:]),
                to_address=Web3.to_checksum_address(bytes(topics[2])[-20:]),
                amount_base_units=int.from_bytes(log["data"], "big"),
                ordinal=log["logIndex"],
            )
        )
    return found
