"""TON transactions recorded from providers (tests/chain/recorded/ton/), loaded onto the lite-client double's ledger.

The cells are the recording's, byte for byte, and each is checked against the recording's own hash. One thing is
supplied: the configured master derives, for the owner, the wallet that sent the notification (a get-method answer
no recording carries).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from pytoniq_core import Address, Cell

from tests.chain.fake_lite_client import Ledger

RECORDED = Path(__file__).parent / "recorded" / "ton"


def recorded(name: str) -> dict:
    return json.loads((RECORDED / name).read_text())


def load_recorded(ledger: Ledger, transactions: list[dict], master: str, derives: str | None) -> str:
    """toncenter v2 transactions (newest first) as their account's history; returns the account (raw)."""
    for tx in reversed(transactions):
        cell = Cell.one_from_boc(base64.b64decode(tx["data"]))
        assert cell.hash == base64.b64decode(tx["transaction_id"]["hash"])  # the bytes are the chain's
        ledger.add_cell(Address(tx["address"]["account_address"]), cell)
    owner = Address(transactions[0]["address"]["account_address"]).to_str(is_user_friendly=False)
    ledger.masters.add(master)
    if derives is not None:
        ledger.wallets[(master, owner)] = Address(derives)
    return owner
