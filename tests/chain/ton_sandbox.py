"""Jetton transfers executed on @ton/sandbox (real TVM, the standard jetton minter and wallet) by
tests/chain/node/ton_sandbox.mjs, loaded into the lite-client double as the receiving accounts' histories.

The transaction BOCs are the sandbox's, byte for byte. One thing is mapped: the network's configured jetton master
answers get_wallet_address with the wallet the sandbox's minter derived (a real get-method run), since a minter
deployed in a sandbox cannot sit at the configured master's address.
"""

from __future__ import annotations

import base64
import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from pytoniq_core import Address, Cell

from tests.chain.fake_lite_client import Ledger

NODE_DIR = Path(__file__).parent / "node"


@dataclass(frozen=True)
class JettonTransfer:
    name: str
    amount: int
    queryId: int
    comment: str | None = None
    commentInline: bool = False  # the comment in the transfer's own cell (Either's left) instead of a reference
    binary: str | None = None  # hex bytes after a non-comment op: a forward payload that is no text
    commentBytes: str | None = None  # hex bytes after the comment op, which need not be UTF-8
    to: str = "merchant"  # or "nobody": an owner whose wallet contract was never deployed
    master: str = "usdt"  # or "lookalike": another minter of the same code whose content also says USDT
    overdraw: bool = False  # the buyer sends more than it holds: its own jetton wallet refuses
    excessToOwner: bool = False  # the response destination is the receiver: its jetton wallet's excess reaches it too


def run(transfers: list[JettonTransfer]) -> dict:
    spec = {"transfers": [{k: v for k, v in asdict(t).items() if v is not None} for t in transfers]}
    spec["transfers"] = [{**t, "amount": str(t["amount"]), "queryId": str(t["queryId"])} for t in spec["transfers"]]
    done = subprocess.run(["node", "ton_sandbox.mjs"], cwd=NODE_DIR, input=json.dumps(spec), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def load(ledger: Ledger, executed: dict, master: str) -> None:
    """The receiving accounts' histories onto the ledger; `master` (raw) derives what the sandbox's minter derives."""
    for account, bocs in executed["accounts"].items():
        for boc in bocs:
            ledger.add_cell(Address(account), Cell.one_from_boc(base64.b64decode(boc)))
    ledger.masters.add(master)
    for owner, wallet in executed["wallets"]["usdt"].items():
        ledger.wallets[(master, owner)] = Address(wallet)
