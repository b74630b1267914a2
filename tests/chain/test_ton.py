"""TON adapter: a real pytoniq LiteClient whose liteserver_request answers from TL-B cells built with pytoniq-core."""

from __future__ import annotations

import base64
import hashlib

import pytest
from pytoniq_core import Address, begin_cell

from chain_watchers.base import TokenTransfer
from chain_watchers.registry import load_registry
from chain_watchers.ton import TonAdapter

from .contract import AdapterContract, Sent
from .fake_lite_client import (
    FakeLiteClient,
    Ledger,
    comment_cell,
    internal_message,
    notification_body,
)

USDT = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"
USDT_RAW = "0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe"


def account(name: str) -> Address:
    return Address((0, hashlib.sha256(name.encode()).digest()))


def raw(address: Address) -> str:
    return address.to_str(is_user_friendly=False)


class TonWorld:
    def __init__(self, ledger: Ledger, adapter: TonAdapter) -> None:
        self.ledger, self.adapter = ledger, adapter
        self.sender, self.recipient, self.stranger = account("buyer"), account("merchant"), account("stranger")
        self.master = Address(USDT)
        ledger.masters.add(USDT_RAW)

    def notify(
        self, owner: Address, amount: int, comment: str | None, outcome: str = "ok", wallet: Address | None = None
    ) -> str:
        """The receiver's jetton wallet tells its owner that `amount` arrived from the sender."""
        wallet = wallet or self.ledger.wallet_of(self.master, owner)
        message = internal_message(wallet, owner, notification_body(amount, self.sender, comment))
        return self.ledger.add(owner, message, outcome)

    def moved(self, owner: Address, amount: int, comment: str | None) -> TokenTransfer:
        return TokenTransfer(
            token_address=USDT_RAW, from_address=raw(self.sender), to_address=raw(owner), amount_base_units=amount,
            ordinal=0, memo=comment,
        )

    async def finalized_transfer(self) -> Sent:
        tx_hash = self.notify(self.recipient, 123_456_789, "order-42")
        moved = (self.moved(self.recipient, 123_456_789, "order-42"),)
        return Sent(tx_hash, moved, depth=1, account=raw(self.recipient))  # committed, and final, once visible

    async def failed_transfer(self) -> Sent:
        # The jetton wallet credited the tokens before notifying, so the transfer is a fact even though this failed.
        tx_hash = self.notify(self.recipient, 5_000_000, None, outcome="compute_failed")
        return Sent(tx_hash, (self.moved(self.recipient, 5_000_000, None),), account=raw(self.recipient))

    async def shallow_transfer(self) -> None:
        return None  # a lite server only answers from masterchain-committed state, which is final

    async def transfer_to_someone_else(self) -> Sent:
        tx_hash = self.notify(self.stranger, 10_000_000, "order-42")
        return Sent(
            tx_hash, (self.moved(self.stranger, 10_000_000, "order-42"),), account=raw(self.stranger),
            intended_recipient=raw(self.recipient),
        )

    def unknown(self) -> Sent:
        self.notify(self.recipient, 1, None)  # the account exists; the hash is simply not in its history
        return Sent(hashlib.sha256(b"nothing").hexdigest(), (), account=raw(self.recipient))

    async def advance(self, blocks: int) -> None:
        raise AssertionError("TON has no shallow state to advance from")

    def respell(self, tx_hash: str) -> str:
        return base64.urlsafe_b64encode(bytes.fromhex(tx_hash)).decode()


@pytest.fixture
def ton() -> TonWorld:
    ledger = Ledger()
    return TonWorld(ledger, TonAdapter(load_registry().network("ton"), FakeLiteClient(ledger)))


class TestTonContract(AdapterContract):
    @pytest.fixture
    def world(self, ton: TonWorld) -> TonWorld:
        return ton


async def test_notification_from_a_wallet_the_master_does_not_derive_is_not_a_transfer(ton: TonWorld) -> None:
    forged = ton.notify(ton.recipient, 1_000_000_000, "order-42", wallet=account("forger's jetton wallet"))
    seen = await ton.adapter.fetch(forged, account=raw(ton.recipient))
    assert (seen.found, seen.success, seen.transfers) == (True, True, ())
    assert seen.reason and "master" in seen.reason


async def test_plain_ton_transfer_carries_no_token_transfer(ton: TonWorld) -> None:
    tx_hash = ton.ledger.add(ton.recipient, internal_message(ton.sender, ton.recipient, comment_cell("hi"), 10**9))
    seen = await ton.adapter.fetch(tx_hash, account=raw(ton.recipient))
    assert (seen.success, seen.final, seen.transfers, seen.reason) == (True, True, (), None)


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        ("compute_failed", "failed: compute phase exit code 33"),
        ("action_failed", "failed: action phase result code 37"),
        ("skipped", "failed: compute phase skipped (no_state)"),
    ],
)
async def test_each_failed_phase_is_named(ton: TonWorld, outcome: str, reason: str) -> None:
    tx_hash = ton.notify(ton.recipient, 1_000, None, outcome=outcome)
    seen = await ton.adapter.fetch(tx_hash, account=raw(ton.recipient))
    assert (seen.success, seen.reason) == (False, reason)


async def test_older_transactions_are_found_by_paging_back_through_the_history(ton: TonWorld) -> None:
    old = ton.notify(ton.recipient, 777, "early")
    for n in range(20):
        ton.notify(ton.recipient, n + 1, None)
    seen = await ton.adapter.fetch(old, account=raw(ton.recipient))
    assert seen.transfers == (ton.moved(ton.recipient, 777, "early"),)
    assert ton.ledger.queries.count("getTransactions") == 2


async def test_search_stops_after_the_configured_number_of_pages(ton: TonWorld) -> None:
    adapter = TonAdapter(ton.adapter.network, ton.adapter.client, max_pages=1)
    old = ton.notify(ton.recipient, 777, None)
    for n in range(16):
        ton.notify(ton.recipient, n + 1, None)
    seen = await adapter.fetch(old, account=raw(ton.recipient))
    assert (seen.found, seen.reason) == (False, f"not among the latest 16 transactions of {raw(ton.recipient)}")


async def test_account_without_state_finds_nothing(ton: TonWorld) -> None:
    seen = await ton.adapter.fetch("ab" * 32, account=raw(account("never used")))
    assert (seen.found, seen.transfers) == (False, ())


async def test_lookup_needs_the_account(ton: TonWorld) -> None:
    with pytest.raises(ValueError, match="account"):
        await ton.adapter.fetch("ab" * 32)


def test_payment_link_is_a_ton_jetton_transfer(ton: TonWorld) -> None:
    link = ton.adapter.payment_link(raw(ton.recipient), USDT_RAW, 12_500_000, reference="order 42/ü")
    recipient = ton.recipient.to_str(is_user_friendly=True, is_url_safe=True, is_bounceable=False)
    assert link == f"ton://transfer/{recipient}?jetton={USDT}&amount=12500000&text=order%2042%2F%C3%BC"


def test_testnet_payment_link_uses_testnet_address_flags(ton: TonWorld) -> None:
    adapter = TonAdapter(load_registry().network("ton-testnet"), ton.adapter.client)
    link = adapter.payment_link(raw(ton.recipient), "kQD0GKBM8ZbryVk2aESmzfU6b9b_8era_IkvBSELujFZPsyy", 1)
    assert link.startswith("ton://transfer/0Q") and "jetton=kQD0GKBM8ZbryVk2aESmzfU6b9b_8era_IkvBSELujFZPsyy" in link


async def test_a_truncated_notification_from_anyone_is_skipped_and_the_scan_goes_on(ton: TonWorld) -> None:
    # Anyone can send the op with a body cut short; reading it must not stop the scan of the wallet's later deposits.
    truncated = begin_cell().store_uint(0x7362D09C, 32).store_uint(7, 64).store_coins(10**9).end_cell()
    forged = ton.ledger.add(ton.recipient, internal_message(account("forger"), ton.recipient, truncated))
    paid = ton.notify(ton.recipient, 2_500_000, "order-43")
    seen, _newest = await ton.adapter.transfers_since(raw(ton.recipient), 0)
    assert [(s.tx_hash, s.transfer) for s in seen] == [(paid, ton.moved(ton.recipient, 2_500_000, "order-43"))]
    observed = await ton.adapter.fetch(forged, account=raw(ton.recipient))
    assert (observed.success, observed.transfers) == (True, ())


async def test_the_head_is_the_last_masterchain_block(ton: TonWorld) -> None:
    assert await ton.adapter.head() == ton.ledger.last_block.seqno
