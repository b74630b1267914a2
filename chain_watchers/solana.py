"""Solana adapter on solana-py's AsyncClient: SPL balance deltas per (owner, mint), finalized commitment, Solana Pay."""

from __future__ import annotations

import json
from collections import defaultdict
from urllib.parse import urlencode

from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction_status import (
    EncodedConfirmedTransactionWithStatusMeta,
    TransactionConfirmationStatus,
    UiTransactionStatusMeta,
)

from chain_watchers.base import (
    AdapterBase,
    InvalidAddress,
    InvalidTxHash,
    TokenTransfer,
    TxObservation,
)
from chain_watchers.registry import Network
from common.money import from_base_units


class SolanaAdapter(AdapterBase):
    def __init__(self, network: Network, client: AsyncClient) -> None:
        super().__init__(network, "solana")
        self.client = client

    @staticmethod
    def validate_address(address: str) -> str:
        """Any 32-byte base58 key: wallets, and program-owned vaults that sit off the curve."""
        try:
            return str(Pubkey.from_string(address))
        except ValueError as error:
            raise InvalidAddress(f"{address!r} is not a base58 32-byte Solana address: {error}") from None

    @staticmethod
    def validate_tx_hash(tx_hash: str) -> str:
        try:
            return str(Signature.from_string(tx_hash))
        except ValueError as error:
            raise InvalidTxHash(f"{tx_hash!r} is not a base58 64-byte Solana signature: {error}") from None

    async def fetch(self, tx_hash: str, *, account: str | None = None) -> TxObservation:
        signature = Signature.from_string(self.validate_tx_hash(tx_hash))
        statuses = await self.client.get_signature_statuses([signature], search_transaction_history=True)
        status = statuses.value[0]
        if status is None:
            return self.not_found(str(signature), "no such signature on this cluster")
        # getTransaction answers only from confirmed blocks; a processed-only signature is still pending.
        response = await self.client.get_transaction(
            signature, encoding="jsonParsed", commitment=Confirmed, max_supported_transaction_version=0
        )
        if response.value is None:
            return self.observed(
                str(signature), success=None, confirmations=0, chain_final=False, transfers=(),
                block_ref=str(status.slot), reason="pending: processed, not yet confirmed",
            )
        head = await self.head()
        meta = response.value.transaction.meta
        return self.observed(
            str(signature),
            success=meta.err is None,
            confirmations=max(0, head - response.value.slot + 1),
            chain_final=status.confirmation_status == TransactionConfirmationStatus.Finalized,
            transfers=_balance_moves(response.value),
            block_ref=str(response.value.slot),
            reason=None if meta.err is None else f"failed: {_error_as_sent(meta)}",
        )

    async def head(self) -> int:
        return (await self.client.get_slot(commitment=Confirmed)).value

    async def find_by_reference(self, reference: str, limit: int = 20) -> tuple[str, ...]:
        """Signatures of confirmed transactions carrying a Solana Pay reference key, newest first."""
        key = Pubkey.from_string(self.validate_address(reference))
        response = await self.client.get_signatures_for_address(key, limit=limit, commitment=Confirmed)
        return tuple(str(item.signature) for item in response.value)

    def payment_link(
        self, to_address: str, token_address: str, amount_base_units: int, reference: str | None = None
    ) -> str:
        """Solana Pay transfer request; `reference` must be a base58 key, which the payer's wallet adds to the tx."""
        coin = self.stablecoin(self.network, token_address)
        params = {
            "amount": from_base_units(amount_base_units, coin.decimals),  # Solana Pay wants token units, not base units
            "spl-token": self.validate_address(coin.address),
        }
        if reference is not None:
            params["reference"] = self.validate_address(reference)
        return f"solana:{self.validate_address(to_address)}?{urlencode(params)}"

    async def close(self) -> None:
        await self.client.close()


def _balance_moves(confirmed: EncodedConfirmedTransactionWithStatusMeta) -> tuple[TokenTransfer, ...]:
    """Net token movement per (owner, mint): post minus pre balances, which also sees inner and CPI transfers."""
    meta = confirmed.transaction.meta
    keys = [str(key.pubkey) for key in confirmed.transaction.transaction.message.account_keys]
    delta: dict[tuple[str, str], int] = defaultdict(int)
    first_index: dict[tuple[str, str], int] = {}
    for sign, balances in ((-1, meta.pre_token_balances or []), (1, meta.post_token_balances or [])):
        for balance in balances:
            # Balances recorded before 2022 have no owner: the token account itself is the best name then.
            owner = str(balance.owner) if balance.owner is not None else keys[balance.account_index]
            key = (owner, str(balance.mint))
            delta[key] += sign * int(balance.ui_token_amount.amount)
            first_index.setdefault(key, balance.account_index)
    senders: dict[str, list[str]] = defaultdict(list)
    for (owner, mint), change in delta.items():
        if change < 0:
            senders[mint].append(owner)
    moves = [
        TokenTransfer(
            token_address=mint,
            from_address=senders[mint][0] if len(senders[mint]) == 1 else None,
            to_address=owner,
            amount_base_units=change,
            ordinal=first_index[(owner, mint)],
        )
        for (owner, mint), change in delta.items()
        if change > 0
    ]
    return tuple(sorted(moves, key=lambda move: move.ordinal))


def _error_as_sent(meta: UiTransactionStatusMeta) -> str:
    """The node's `meta.err` as its JSON (`{"InstructionError": [1, {"Custom": 1}]}`): solders' own rendering of the
    error names its Rust types, which tells a merchant nothing."""
    return json.dumps(json.loads(meta.to_json())["err"], separators=(", ", ": "))
