"""TON adapter on pytoniq's LiteClient: receiver-side jetton notifications, their wallet checked by the master."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import AsyncIterator
from urllib.parse import quote, urlencode

from pytoniq import LiteClient
from pytoniq_core import Address, begin_cell
from pytoniq_core.boc.address import AddressError
from pytoniq_core.boc.slice import Slice, SliceError
from pytoniq_core.boc.tvm_bitarray import TvmBitarrayException
from pytoniq_core.tl.block import BlockIdExt
from pytoniq_core.tlb.transaction import Transaction, TransactionOrdinary

from chain_watchers.base import (
    AdapterBase,
    InvalidAddress,
    InvalidTxHash,
    SeenTransfer,
    TokenTransfer,
    TxObservation,
)
from chain_watchers.registry import Network

TRANSFER_NOTIFICATION = 0x7362D09C  # TEP-74: sent by the receiver's jetton wallet to its owner
TEXT_COMMENT = 0x00000000  # a forward payload opening with 32 zero bits is a UTF-8 comment
PAGE = 16  # the most transactions one liteServer.getTransactions answer may carry
_RAW = re.compile(r"(0|-1):[0-9a-fA-F]{64}")
_FRIENDLY = re.compile(r"[A-Za-z0-9+/_-]{48}")
_HEX_HASH = re.compile(r"[0-9a-fA-F]{64}")
_BASE64_HASH = re.compile(r"[A-Za-z0-9+/_-]{43}=")


class TonAdapter(AdapterBase):
    def __init__(self, network: Network, client: LiteClient, max_pages: int = 4) -> None:
        super().__init__(network, "ton")
        self.client = client
        self.max_pages = max_pages  # how far back an account's history is searched for a hash

    @staticmethod
    def validate_address(address: str) -> str:
        """Raw `0:<hex>` or 48-character user-friendly (base64 or base64url, checksummed); normal form is raw."""
        if not (_RAW.fullmatch(address) or _FRIENDLY.fullmatch(address)):
            raise InvalidAddress(f"{address!r} is neither raw 0:<64 hex> nor a 48-character TON address")
        try:
            parsed = Address(address)  # checks the CRC16 of user-friendly forms
        except AddressError:
            raise InvalidAddress(f"{address!r} fails its TON address checksum (mistyped?)") from None
        if parsed.wc not in (0, -1):
            raise InvalidAddress(f"{address!r} names workchain {parsed.wc}; only 0 and -1 exist")
        return parsed.to_str(is_user_friendly=False)

    @staticmethod
    def validate_tx_hash(tx_hash: str) -> str:
        """64 hex digits (explorers) or 44-character base64/base64url (toncenter); normal form is lowercase hex."""
        if _HEX_HASH.fullmatch(tx_hash):
            return tx_hash.lower()
        if _BASE64_HASH.fullmatch(tx_hash):
            try:
                return base64.b64decode(tx_hash.replace("-", "+").replace("_", "/"), validate=True).hex()
            except binascii.Error:
                pass
        raise InvalidTxHash(f"{tx_hash!r} is neither 64 hex digits nor a 44-character base64 hash")

    async def fetch(self, tx_hash: str, *, account: str | None = None) -> TxObservation:
        """Lite servers index transactions by account, so `account` (the receiving wallet) is required."""
        if account is None:
            raise ValueError("a TON transaction is looked up through its account: pass account=")
        tx_hash = self.validate_tx_hash(tx_hash)
        owner = Address(self.validate_address(account))
        last = await self._last()
        known = False
        async for transaction, block in self._history(owner, last):
            known = True
            if transaction.cell.hash.hex() == tx_hash:
                return await self._observe(tx_hash, owner, transaction, block, last)
        if not known:
            return self.not_found(tx_hash, f"{account} has no state or no transactions on this network")
        return self.not_found(tx_hash, f"not among the latest {self.max_pages * PAGE} transactions of {account}")

    async def transfers_since(self, account: str, after_lt: int) -> tuple[list[SeenTransfer], int]:
        """Jetton deposits to `account` newer than logical time `after_lt`, and the newest lt read (the next cursor).

        Only the latest `max_pages` pages are read: a cursor further back than that loses the oldest deposits.
        """
        owner = Address(self.validate_address(account))
        last = await self._last()
        found, newest = [], after_lt
        async for transaction, _block in self._history(owner, last):
            if transaction.lt <= after_lt:
                break
            newest = max(newest, transaction.lt)
            transfers, _note = await self._notification(owner, transaction, last)
            found += [SeenTransfer(tx_hash=transaction.cell.hash.hex(), position=transaction.lt, transfer=t)
                      for t in transfers]
        return found, newest

    async def head(self) -> int:
        return (await self._last()).seqno

    async def _last(self) -> BlockIdExt:
        # Everything read through this masterchain block is committed: TON finality is the masterchain's.
        return BlockIdExt.from_dict((await self.client.get_masterchain_info())["last"])

    async def _history(self, owner: Address, last: BlockIdExt) -> AsyncIterator[tuple[Transaction, BlockIdExt]]:
        """The account's transactions, newest first, at most `max_pages` pages; nothing for an account without state."""
        _, shard_account = await self.client.raw_get_account_state(owner, last)
        if shard_account is None:
            return
        lt, cursor = shard_account.last_trans_lt, shard_account.last_trans_hash
        for _ in range(self.max_pages):
            if lt == 0:
                return
            transactions, blocks = await self.client.raw_get_transactions(owner, PAGE, lt, cursor)
            for transaction, block in zip(transactions, blocks):
                yield transaction, block
            if not transactions:
                return
            lt, cursor = transactions[-1].prev_trans_lt, transactions[-1].prev_trans_hash

    async def _observe(
        self, tx_hash: str, owner: Address, transaction: Transaction, block: BlockIdExt, last: BlockIdExt
    ) -> TxObservation:
        failure = _failure(transaction)
        transfers, note = await self._notification(owner, transaction, last)
        return self.observed(
            tx_hash,
            success=failure is None,
            confirmations=1,
            chain_final=True,
            transfers=transfers,
            block_ref=f"{block.workchain}:{block.shard & (2**64 - 1):016x}:{block.seqno}",
            reason=failure or note,
        )

    async def _notification(
        self, owner: Address, transaction: Transaction, last: BlockIdExt
    ) -> tuple[tuple[TokenTransfer, ...], str | None]:
        message = transaction.in_msg
        if message is None or not message.is_internal:
            return (), None
        parsed = _parse_notification(message.body.begin_parse())
        if parsed is None:
            return (), None
        amount, sender, memo = parsed
        master = await self._master_of(message.info.src, owner, last)
        if master is None:
            # Anyone can send this op; only a wallet the master itself derives for this owner proves a deposit.
            return (), "transfer_notification from a jetton wallet no configured master derives for this owner"
        transfer = TokenTransfer(
            token_address=master,
            from_address=sender,
            to_address=owner.to_str(is_user_friendly=False),
            amount_base_units=amount,
            ordinal=0,
            memo=memo,
        )
        return (transfer,), None

    async def _master_of(self, wallet: Address, owner: Address, last: BlockIdExt) -> str | None:
        owner_slice = begin_cell().store_address(owner).end_cell().begin_parse()
        for coin in self.network.stablecoins:
            master = self.validate_address(coin.address)
            stack = await self.client.run_get_method(master, "get_wallet_address", [owner_slice.copy()], last)
            if stack and stack[0].load_address() == wallet:
                return master
        return None

    def payment_link(
        self, to_address: str, token_address: str, amount_base_units: int, reference: str | None = None
    ) -> str:
        """ton://transfer/<owner>?jetton=<master>&amount=<base units>&text=<comment> (Tonkeeper's jetton form)."""
        master = Address(self.validate_address(self.stablecoin(self.network, token_address).address))
        to = Address(self.validate_address(to_address))
        testnet = self.network.testnet
        params: dict[str, str | int] = {
            "jetton": master.to_str(is_user_friendly=True, is_url_safe=True, is_bounceable=True, is_test_only=testnet),
            "amount": amount_base_units,
        }
        if reference is not None:
            params["text"] = reference
        # Non-bounceable recipient: a wallet not yet deployed must still receive the notification's TON.
        recipient = to.to_str(is_user_friendly=True, is_url_safe=True, is_bounceable=False, is_test_only=testnet)
        return f"ton://transfer/{recipient}?{urlencode(params, quote_via=quote)}"

    async def close(self) -> None:
        await self.client.close()


def _failure(transaction: Transaction) -> str | None:
    """None when the transaction succeeded: ordinary, not aborted, compute and action phases both successful."""
    description = transaction.description
    if not isinstance(description, TransactionOrdinary):
        return "failed: not an ordinary transaction"
    compute = description.compute_ph
    if compute.type_ != "vm":
        return f"failed: compute phase skipped ({compute.reason.type_})"
    if not compute.success:
        return f"failed: compute phase exit code {compute.exit_code}"
    if description.action is None or not description.action.success:
        code = description.action.result_code if description.action is not None else "none"
        return f"failed: action phase result code {code}"
    if description.aborted:
        return "failed: aborted"
    return None


def _parse_notification(body: Slice) -> tuple[int, str | None, str | None] | None:
    """(amount, sender, comment) of a TEP-74 transfer_notification, or None for any other or malformed body."""
    try:
        if body.remaining_bits < 32 or body.load_uint(32) != TRANSFER_NOTIFICATION:
            return None
        body.load_uint(64)  # query_id
        amount = body.load_coins()
        sender = body.load_address()
    # bitarray raises ValueError on a body cut short: anyone can send this op, and one bad body must not stop a scan.
    except (TvmBitarrayException, SliceError, AddressError, IndexError, ValueError):
        return None
    return amount, sender.to_str(is_user_friendly=False) if isinstance(sender, Address) else None, _comment(body)


def _comment(payload: Slice) -> str | None:
    """The text comment of a forward_payload:(Either Cell ^Cell), or None.

    The jetton wallet credited the tokens before it sent the notification, and it copies the payload unread: a payload
    that is no readable comment (bytes that are not UTF-8, a missing reference) names no session but loses no money.
    """
    try:
        payload = payload.load_ref().begin_parse() if payload.load_bit() else payload
        if payload.remaining_bits >= 32 and payload.load_uint(32) == TEXT_COMMENT:
            return payload.load_snake_string()
    except (TvmBitarrayException, SliceError, IndexError, ValueError):  # UnicodeDecodeError is a ValueError
        pass
    return None
