"""TRON adapter on tronpy's AsyncTron: TRC-20 Transfer event logs, finality by the latest solidified block."""

from __future__ import annotations

import asyncio
import re

from tronpy import AsyncTron, keys
from tronpy.exceptions import TransactionNotFound

from chain_watchers.base import (
    TRANSFER_TOPIC,
    AdapterBase,
    BlockNotAvailable,
    InvalidAddress,
    InvalidTxHash,
    SeenTransfer,
    TokenTransfer,
    TxObservation,
)
from chain_watchers.registry import Network

_ADDRESS = re.compile(r"T[1-9A-HJ-NP-Za-km-z]{33}")
_HASH = re.compile(r"[0-9a-fA-F]{64}")


class TronAdapter(AdapterBase):
    def __init__(self, network: Network, client: AsyncTron) -> None:
        super().__init__(network, "tron")
        self.client = client

    @staticmethod
    def validate_address(address: str) -> str:
        """Base58check T-address (what wallets show); the hex 41... form is refused so one address has one spelling."""
        if not _ADDRESS.fullmatch(address):
            raise InvalidAddress(f"{address!r} is not a 34-character base58 TRON address starting with T")
        try:
            raw = keys.to_raw_address(address)  # verifies the base58check checksum
        except ValueError:
            raise InvalidAddress(f"{address!r} fails its base58check checksum (mistyped?)") from None
        if len(raw) != 21 or raw[0] != 0x41:
            raise InvalidAddress(f"{address!r} does not decode to a 0x41-prefixed TRON account")
        return address

    @staticmethod
    def validate_tx_hash(tx_hash: str) -> str:
        """64 bare hex digits: TRON ids carry no 0x, and a 0x-prefixed hash is most likely from an EVM chain."""
        if not _HASH.fullmatch(tx_hash):
            raise InvalidTxHash(f"{tx_hash!r} is not 64 hex digits without 0x")
        return tx_hash.lower()

    async def fetch(self, tx_hash: str, *, account: str | None = None) -> TxObservation:
        tx_hash = self.validate_tx_hash(tx_hash)
        try:
            transaction = await self.client.get_transaction(tx_hash)
        except TransactionNotFound:
            return self.not_found(tx_hash, "no such transaction on this network")
        try:
            info = await self.client.get_transaction_info(tx_hash)
        except TransactionNotFound:
            info = {}
        if "blockNumber" not in info:
            return self.observed(
                tx_hash, success=None, confirmations=0, chain_final=False, transfers=(), block_ref=None,
                reason="pending: not yet in a block",
            )
        latest, solid = await asyncio.gather(
            self.client.get_latest_block_number(), self.client.get_latest_solid_block_number()
        )
        block = info["blockNumber"]
        contract_ret = transaction.get("ret", [{}])[0].get("contractRet", "")
        # Plain TRX transfers have no receipt result; contract calls carry one that must agree.
        receipt_result = info.get("receipt", {}).get("result", "SUCCESS")
        success = contract_ret == "SUCCESS" and receipt_result == "SUCCESS"
        return self.observed(
            tx_hash,
            success=success,
            confirmations=max(0, latest - block + 1),
            chain_final=block <= solid,
            transfers=tuple(_transfers(info.get("log", []))),
            block_ref=str(block),
            reason=None if success else _failure(contract_ret, info),
        )

    async def head(self) -> int:
        return await self.client.get_latest_block_number()

    async def solid_head(self) -> int:
        """The latest solidified (irreversible) block: a forward scan reads no further, so no reorg can undo it."""
        return await self.client.get_latest_solid_block_number()

    async def transfers_in_block(self, number: int) -> list[SeenTransfer]:
        """Every TRC-20 Transfer a block's transactions logged (java-tron's gettransactioninfobyblocknum).

        java-tron answers a block it has not got yet like a block without transactions, and behind a load balancer
        the node asked may lag the one that reported the solid head: an empty answer stands only for a block the node
        shows without transactions, else BlockNotAvailable, so that a scan never steps over a block it did not read.
        """
        infos = await self.client.provider.make_request("wallet/gettransactioninfobyblocknum", {"num": number})
        if not infos:  # {} or [] (the answer has changed between java-tron versions)
            block = await self.client.provider.make_request("wallet/getblockbynum", {"num": number})
            if not block or block.get("transactions"):
                raise BlockNotAvailable(f"block {number} is not served yet by this node")
            return []
        return [
            SeenTransfer(tx_hash=info["id"], position=number, transfer=transfer)
            for info in infos
            for transfer in _transfers(info.get("log", []))
        ]

    def payment_link(
        self, to_address: str, token_address: str, amount_base_units: int, reference: str | None = None
    ) -> None:
        """TRON has no wallet-wide payment URI: the page shows the address and the buyer types the amount."""

    async def close(self) -> None:
        await self.client.close()


def _failure(contract_ret: str, info: dict) -> str:
    message = info.get("resMessage", "")
    try:
        message = bytes.fromhex(message).decode(errors="replace")  # java-tron sends the revert text hex-encoded
    except ValueError:
        pass
    return f"failed: {contract_ret or info.get('receipt', {}).get('result', 'unknown')}" + (
        f" ({message})" if message else ""
    )


def _contract(address: str) -> str:
    """A log's contract: base58 when the receipt was asked for with visible=true (tronpy always asks, and java-tron
    then prints Log.address like any address field), else the TVM's 20-byte hex."""
    if _ADDRESS.fullmatch(address):
        return TronAdapter.validate_address(address)
    return keys.to_base58check_address("41" + address[-40:])


def _transfers(logs: list[dict]) -> list[TokenTransfer]:
    found = []
    for position, log in enumerate(logs):
        topics = log.get("topics", [])
        if len(topics) != 3 or topics[0].lower() != TRANSFER_TOPIC.hex():
            continue
        # Topics stay 32-byte hex words whatever `visible` says: the accounts are their last 20 bytes.
        found.append(
            TokenTransfer(
                token_address=_contract(log["address"]),
                from_address=keys.to_base58check_address("41" + topics[1][-40:]),
                to_address=keys.to_base58check_address("41" + topics[2][-40:]),
                amount_base_units=int(log["data"], 16),
                ordinal=position,
            )
        )
    return found
