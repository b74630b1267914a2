"""Token transfers executed on litesvm by tests/chain/node/solana_svm.mjs, served by the local Solana JSON-RPC cluster.

litesvm runs the real SPL Token, Token-2022 and Associated Token Account programs in process. The helper prints each
recorded transaction as a getTransaction jsonParsed result (which fields the SVM produced and which the helper shaped is
written at its top); `serve` puts them on a `Cluster` at the slot a test chooses.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.chain.fake_solana_rpc import Cluster, Recorded

NODE_DIR = Path(__file__).parent / "node"
USDC_DEVNET = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"  # the stablecoin networks.toml lists on solana-devnet


@dataclass(frozen=True)
class Mint:
    name: str
    address: str
    program: str = "token"  # or "token2022"
    decimals: int = 6
    feeBps: int = 0  # Token-2022 TransferFeeConfig: the program withholds this share of each transfer


@dataclass(frozen=True)
class Transfer:
    name: str
    amount: int  # base units
    to: str | None = None  # the receiving wallet; None for a CPI transfer, whose wallet the helper makes and signs with
    mint: str = "usdc"
    reference: str | None = None  # Solana Pay reference key, added as a read-only key of the transfer instruction
    via: str = "direct"  # "cpi": moved by the ATA program's RecoverNested, a transferChecked inner instruction
    fail: bool = False  # the sender holds one base unit less than it sends: the token program refuses
    times: int = 1  # transferChecked instructions of the same amount in one transaction


USDC = Mint("usdc", USDC_DEVNET)


def run(transfers: list[Transfer], mints: tuple[Mint, ...] = (USDC,)) -> dict[str, dict]:
    """{name: {"signature", "to", "result"}}: the transactions as the SVM executed them."""
    spec = {"mints": [asdict(m) for m in mints], "transfers": [asdict(t) for t in transfers]}
    done = subprocess.run(["node", "solana_svm.mjs"], cwd=NODE_DIR, input=json.dumps(spec), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["transactions"]


def serve(cluster: Cluster, executed: dict, slot: int) -> str:
    """Put one executed transaction on the cluster at `slot` (the only field changed); returns its signature."""
    result = {**executed["result"], "slot": slot}
    cluster.transactions[executed["signature"]] = Recorded(slot, result)
    return executed["signature"]
