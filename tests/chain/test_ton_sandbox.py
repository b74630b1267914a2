"""The TON adapter decoding jetton transfers the standard jetton wallet executed on @ton/sandbox (real TVM)."""

from __future__ import annotations

import pytest
from pytoniq_core import Address

from chain_watchers.registry import load_registry
from chain_watchers.ton import TonAdapter

from .fake_lite_client import FakeLiteClient, Ledger
from .ton_sandbox import JettonTransfer, load, run

USDT = "kQD0GKBM8ZbryVk2aESmzfU6b9b_8era_IkvBSELujFZPsyy"  # the ton-testnet master networks.toml lists
USDT_RAW = Address(USDT).to_str(is_user_friendly=False)
TRANSFERS = [
    JettonTransfer("comment", 10_000_000, 7, comment="sess_abc"),
    JettonTransfer("inline", 2_500_000, 8, comment="sess_inline ü", commentInline=True),
    JettonTransfer("binary", 3_000_000, 9, binary="deadbeef"),
    JettonTransfer("lookalike", 10_000_000, 10, comment="sess_abc", master="lookalike"),
    JettonTransfer("again", 10_000_000, 11, comment="sess_abc"),  # the same comment, another query id
    JettonTransfer("nobody", 4_000_000, 12, comment="sess_x", to="nobody"),
    JettonTransfer("not_utf8", 6_000_000, 13, commentBytes="fffe73657373"),
]


@pytest.fixture(scope="module")
def executed() -> dict:
    return run(TRANSFERS)


@pytest.fixture
def adapter(executed) -> TonAdapter:
    ledger = Ledger()
    load(ledger, executed, USDT_RAW)
    return TonAdapter(load_registry().network("ton-testnet"), FakeLiteClient(ledger))


@pytest.mark.parametrize(
    ("name", "amount", "memo", "success"),
    [
        ("comment", 10_000_000, "sess_abc", True),  # Tonkeeper's form: the comment cell by reference
        ("inline", 2_500_000, "sess_inline ü", True),  # the comment in the notification's own cell, UTF-8
        ("binary", 3_000_000, None, True),  # a payload that is no comment: the tokens count, no session is named
        ("again", 10_000_000, "sess_abc", True),
        # A comment op whose bytes are not UTF-8: the tokens arrived all the same; only no session is named.
        ("not_utf8", 6_000_000, None, True),
        # The owner has no wallet contract: the notification finds no code (compute skipped), yet the jetton wallet
        # credited the tokens before notifying, so they arrived.
        ("nobody", 4_000_000, "sess_x", False),
    ],
)
async def test_the_notification_is_decoded_as_the_jetton_wallet_sent_it(executed, adapter, name, amount, memo,
                                                                       success) -> None:
    sent = executed["transfers"][name]
    seen = await adapter.fetch(sent["hash"], account=sent["account"])
    assert (seen.found, seen.success, seen.final) == (True, success, True)
    [transfer] = seen.transfers
    buyer_wallets = set(executed["wallets"]["usdt"].values())
    assert (transfer.token_address, transfer.to_address, transfer.amount_base_units, transfer.memo) == (
        USDT_RAW, sent["account"], amount, memo)
    assert transfer.from_address not in buyer_wallets  # the sender is the buyer's wallet address, not a jetton wallet


async def test_a_lookalike_masters_notification_is_no_payment(executed, adapter) -> None:
    sent = executed["transfers"]["lookalike"]
    seen = await adapter.fetch(sent["hash"], account=sent["account"])
    assert (seen.success, seen.transfers) == (True, ())
    assert seen.reason == "transfer_notification from a jetton wallet no configured master derives for this owner"


async def test_a_scan_finds_each_payment_once_with_its_comment(executed, adapter) -> None:
    seen, newest = await adapter.transfers_since(executed["merchant"], 0)
    by_hash = {s.tx_hash: (s.transfer.amount_base_units, s.transfer.memo) for s in seen}
    hashes = executed["transfers"]
    assert by_hash == {
        hashes["comment"]["hash"]: (10_000_000, "sess_abc"), hashes["inline"]["hash"]: (2_500_000, "sess_inline ü"),
        hashes["binary"]["hash"]: (3_000_000, None), hashes["again"]["hash"]: (10_000_000, "sess_abc"),
        hashes["not_utf8"]["hash"]: (6_000_000, None),
    }  # two payments with one comment stay two (their query ids differ); the lookalike is not among them
    assert newest == max(s.position for s in seen)  # the newest transaction read: where the next scan resumes
