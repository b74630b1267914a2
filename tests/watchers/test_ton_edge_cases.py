"""TON edge cases, one table: jetton transfers the standard jetton minter and wallet executed on @ton/sandbox (real
TVM), served byte for byte through the lite-client double, found by the watcher through their comment or posted as
hashes, and applied by the order actor. Each row asserts what the merchant sees through the API."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest

from chain_watchers.registry import load_registry
from chain_watchers.ton import TonAdapter
from common.clock import utcnow
from tests.chain.fake_lite_client import FakeLiteClient, Ledger
from tests.chain.ton_recorded import load_recorded, recorded
from tests.chain.ton_sandbox import JettonTransfer, load, run
from tests.integration.helpers import expire_due, order, quick
from tests.watchers import api
from tests.watchers.conftest import forget_cursors
from tests.watchers.edge_cases import (
    assert_row,
    one_transfer_for_two_refunds,
    paid,
    refund_outcome,
    report,
)

NETWORK = "ton-testnet"
USDT = "kQD0GKBM8ZbryVk2aESmzfU6b9b_8era_IkvBSELujFZPsyy"  # the testnet jetton master networks.toml lists
USDT_RAW = TonAdapter.validate_address(USDT)
DEADLINE = timedelta(minutes=31)  # past WATCH_NOT_FOUND_AFTER_S (30 minutes)


@dataclass(frozen=True)
class Pay:
    amount: int  # base units (6 decimals)
    to: str = "merchant"  # the sandbox owner receiving: "merchant", or "nobody" (a wallet never deployed)
    master: str = "usdt"  # or "lookalike": another minter of the same code whose content also says USDT
    posted: bool = False  # the buyer's page reports the hash before the watcher's tick
    overdraw: bool = False  # more than the sender holds: the sender's own jetton wallet refuses and bounces it
    excess: bool = False  # the receiver is also the response destination: one trace brings it two messages
    unreadable: bool = False  # the comment op is followed by bytes that are not UTF-8 instead of the session id


@dataclass(frozen=True)
class Case:
    kind: str  # "payment": comment = session id, found by the scan; "refund": a 10.00 refund posted with submit-tx
    pays: tuple[Pay, ...]
    status: str  # the order's status (payment) or the refund's (refund)
    payments: tuple[str, ...] = ()  # amounts the order records, sorted (payment)
    verdicts: tuple[tuple[str, str | None], ...] = ()  # (status, reason) of each attempt or refund transaction
    expired: bool = False
    receive: str = "merchant"  # the merchant's receive address (payment) or the refund address (refund)
    later: bool = False  # a second tick past WATCH_NOT_FOUND_AFTER_S


NO_STABLECOIN = f"moved no stablecoin accepted on {NETWORK}"
NOT_FOUND = f"not found on {NETWORK} 31 minutes after it was submitted"
CASES = {
    "exact payment found by its comment": Case("payment", (Pay(10_000_000),), **paid("PAID", "10.00")),
    "one notification posted by the page and found by the scan is one payment":
        Case("payment", (Pay(10_000_000, posted=True),), **paid("PAID", "10.00")),
    "one trace brings the receive wallet a notification and an excess: one payment":
        Case("payment", (Pay(10_000_000, excess=True),), **paid("PAID", "10.00")),
    "two payments to one session (one comment, two query ids)":
        Case("payment", (Pay(5_000_000), Pay(5_000_000)), **paid("PAID", "5.00", "5.00")),
    "out of order: the page posts the later transfer before the scan has read the earlier":
        Case("payment", (Pay(6_000_000), Pay(4_000_000, posted=True)), **paid("PAID", "4.00", "6.00")),
    "overpayment is recorded in full": Case("payment", (Pay(12_000_000),), **paid("PAID", "12.00")),
    "underpayment leaves the rest due": Case("payment", (Pay(7_000_000),), **paid("PARTIAL_PAID", "7.00")),
    "payment after the session expired is recorded on the canceled order (late)":
        Case("payment", (Pay(10_000_000),), **paid("CANCELED", "10.00"), expired=True),
    # No session is named, so the scan cannot attribute it; the tokens arrived, and the hash the page posts pays.
    "a comment that is not UTF-8 pays once the page posts its hash":
        Case("payment", (Pay(10_000_000, unreadable=True, posted=True),), **paid("PAID", "10.00")),
    # The scan ignores it (its jetton wallet is not the configured master's); the hash the page posts is rejected.
    "a lookalike master whose content says USDT pays nothing":
        Case("payment", (Pay(10_000_000, master="lookalike", posted=True),), "PENDING", (),
             (("rejected", NO_STABLECOIN),)),
    # The notification aborts (no code to run), yet the jetton wallet credited the tokens before notifying.
    "a notification to a receive wallet never deployed (compute skipped) still pays":
        Case("payment", (Pay(10_000_000, to="nobody"),), **paid("PAID", "10.00"),
             receive="nobody"),
    # The failed transaction is the sender's jetton wallet's: the receive wallet's history never holds it.
    "a transfer the sender's jetton wallet refused (compute failed, bounced) pays nothing":
        Case("payment", (Pay(10_000_000, overdraw=True, posted=True),), "PENDING", (), (("rejected", NOT_FOUND),),
             later=True),
    "refund transfer executes the refund": Case("refund", (Pay(10_000_000),), "EXECUTED", (), (("executed", None),)),
    "refund paid in full to the wrong address is never in the refund address's history":
        Case("refund", (Pay(10_000_000, to="nobody"),), "APPROVED", (), (("failed", NOT_FOUND),), later=True),
    "refund in a lookalike jetton moves no USDT": Case("refund", (Pay(10_000_000, master="lookalike"),), "APPROVED",
                                                       (), (("failed", f"moved no USDT ({USDT_RAW})"),)),
    "refund the sender's jetton wallet refused": Case("refund", (Pay(10_000_000, overdraw=True),), "APPROVED", (),
                                                     (("failed", NOT_FOUND),), later=True),
}


@pytest.fixture
def ton(stack, watchers) -> tuple:
    ledger, network = Ledger(), load_registry().network(NETWORK)

    async def open_adapter(net):
        return TonAdapter(net, FakeLiteClient(ledger))

    return ledger, watchers("ton", (network,), open_adapter)


def execute(ledger: Ledger, pays: tuple[Pay, ...], comment: str | None) -> dict:
    """Runs the transfers on the sandbox and loads the receiving accounts' histories onto the ledger."""
    executed = run([JettonTransfer(f"pay{i}", p.amount, i + 1, comment=None if p.unreadable else comment, to=p.to,
                                   master=p.master, overdraw=p.overdraw, excessToOwner=p.excess,
                                   commentBytes="fffe" if p.unreadable else None) for i, p in enumerate(pays)])
    load(ledger, executed, USDT_RAW)
    return executed


async def ticks(watcher, case: Case) -> None:
    await watcher.run_once()
    if case.later:
        watcher.watch.clock = lambda: utcnow() + DEADLINE
        await watcher.run_once()


async def pay(stack, merchant, ton, case: Case) -> tuple[str, tuple]:
    ledger, watcher = ton
    await forget_cursors(stack.pool, NETWORK)  # the sandbox's wallets recur in every test, its logical times too
    created = await quick(merchant, amount="10.00", ttl_seconds=60)
    if case.expired:
        await expire_due(stack, 120)
        assert (await order(merchant, created["order_id"]))["sessions"][0]["status"] == "EXPIRED"
    executed = execute(ledger, case.pays, created["session_id"])
    await api.receive_on(merchant, NETWORK, executed[case.receive])
    for i, p in enumerate(case.pays):
        if p.posted:
            await report(stack, created["session_key"], NETWORK, executed["transfers"][f"pay{i}"]["hash"])
    await ticks(watcher, case)
    body = await order(merchant, created["order_id"])
    attempts = await stack.pool.fetch("SELECT status, reason FROM payment_attempts WHERE session_id = $1",
                                      created["session_id"])
    verdicts = tuple(sorted((a["status"], a["reason"]) for a in attempts))
    return body["status"], (tuple(sorted(p["amount"] for p in body["payments"])), verdicts)


async def refund(stack, merchant, ton, case: Case) -> tuple[str, tuple]:
    ledger, watcher = ton
    order_id = await api.paid_order(merchant)
    executed = execute(ledger, case.pays, None)
    refund_id = await api.refund(merchant, order_id, "10.00", NETWORK, executed[case.receive], USDT)
    await api.submit(merchant, refund_id, executed["transfers"]["pay0"]["hash"], NETWORK, USDT)
    await ticks(watcher, case)
    return await refund_outcome(merchant, refund_id)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_edge_case(stack, merchant, ton, case: Case) -> None:
    assert_row(await {"payment": pay, "refund": refund}[case.kind](stack, merchant, ton, case), case)


async def test_one_refund_transfer_posted_for_a_second_refund_is_refused(merchant, ton) -> None:
    ledger, watcher = ton
    executed = execute(ledger, (Pay(10_000_000),), None)
    first, second = [await api.refund(merchant, await api.paid_order(merchant), "10.00", NETWORK,
                                      executed["merchant"], USDT) for _ in range(2)]
    await one_transfer_for_two_refunds(merchant, watcher, [first, second], executed["transfers"]["pay0"]["hash"],
                                       NETWORK, USDT)


async def test_a_recorded_testnet_notification_posted_by_the_page_pays_the_order(stack, merchant, ton) -> None:
    # Real chain data through watcher, actor and API: 10000 tokens to a wallet not yet deployed (compute skipped).
    ledger, watcher = ton
    tx = recorded("testnet_toncenter_v2_transaction_notification_with_comment.json")
    receiving = load_recorded(ledger, [tx], USDT_RAW, derives=tx["in_msg"]["source"])
    created = await quick(merchant, amount="10.00")
    await api.receive_on(merchant, NETWORK, receiving)
    await report(stack, created["session_key"], NETWORK, tx["transaction_id"]["hash"])  # toncenter's base64 spelling
    await watcher.run_once()
    body = await order(merchant, created["order_id"])
    assert (body["status"], [p["amount"] for p in body["payments"]]) == ("PAID", ["10000.00"])
