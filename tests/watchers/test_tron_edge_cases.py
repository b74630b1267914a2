"""TRON edge cases, one table: receipts recorded on mainnet (tests/chain/recorded/tron) replayed on Nile by the local
full node, found by the watcher through their unique amount or reported by the page, and applied by the order actor.
Each row asserts what the merchant sees through the API."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from aiohttp.test_utils import TestServer
from tronpy import keys
from tronpy.keys import PrivateKey

from chain_watchers.clients import open_adapter
from chain_watchers.registry import load_registry
from tests.chain.fake_tron_node import (
    Chain,
    Recorded,
    build_app,
    recorded,
    transaction_in_history,
)
from tests.integration.helpers import expire_due, order, quick
from tests.watchers import api
from tests.watchers.conftest import forget_cursors
from tests.watchers.edge_cases import (
    assert_row,
    one_transfer_for_two_refunds,
    refund_outcome,
    report,
)

NETWORK = "tron-nile"
USDT = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"  # the Nile test USDT networks.toml accepts
TETHER = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"  # Tether's mainnet contract: symbol USDT, not the one Nile accepts
BUYER, STRANGER = (PrivateKey.random().public_key.to_base58check_address() for _ in range(2))

RECEIPT = recorded("mainnet_info_usdt_transfer_0130dfde.json")  # a mainnet USDT transfer and its transaction
TRANSACTION = transaction_in_history(RECEIPT["id"])
FAILED_RECEIPT = recorded("mainnet_info_usdt_out_of_energy_e63a324a.json")  # a USDT call that ran out of energy
FAILED_RET = recorded("mainnet_tx_ret_out_of_energy_e63a324a.json")


def _word(address: str) -> str:
    return keys.to_hex_address(address)[2:].rjust(64, "0")


def replay(chain: Chain, block: int, *moves: tuple[str, str, int], failed: bool = False) -> str:
    """A recorded receipt under a new id in `block`, its Transfer log once per (token, recipient, base units).

    The transaction beside it keeps its recorded body under the new id: the adapter reads only its `ret`.
    """
    tx_hash = secrets.token_hex(32)
    if failed:
        chain.transactions[tx_hash] = Recorded(FAILED_RET, {**FAILED_RECEIPT, "id": tx_hash, "blockNumber": block})
        return tx_hash
    [log] = RECEIPT["log"]
    logs = [{"address": _word(token)[24:], "topics": [log["topics"][0], log["topics"][1], _word(to)],
             "data": f"{units:064x}"} for token, to, units in moves]
    info = {**RECEIPT, "id": tx_hash, "blockNumber": block, "contract_address": "41" + logs[0]["address"], "log": logs}
    chain.transactions[tx_hash] = Recorded({**TRANSACTION, "txID": tx_hash}, info)
    return tx_hash


@dataclass(frozen=True)
class Pay:
    units: int | None = None  # base units (USDT has 6 decimals); None: the amount the page quotes the session
    to: str | None = None  # None: the merchant's receive address (payments) or the buyer (refunds)
    token: str = USDT
    times: int = 1  # Transfer logs in the one transaction
    failed: bool = False
    report: bool = False  # the page reports the hash (else only the watcher's scan can find it)
    later: bool = False  # reaches the node only after a first tick, in an older block
    lagging: bool = False  # in a solidified block the node serving the scan has not got at the first tick


@dataclass(frozen=True)
class Case:
    kind: str  # "payment": found by its unique amount or reported; "refund": posted with submit-tx for a 10.00 refund
    pays: tuple[Pay, ...]
    status: str  # the order's status (payment) or the refund's (refund)
    payments: tuple[str, ...] = ()  # the order's payments: amount, "(late)" when recorded on an order already ended
    verdicts: tuple[tuple[str, str | None], ...] = ()  # (status, reason) of each attempt or refund transaction
    expired: bool = False


FAILED = ("the transaction failed on chain (failed: OUT_OF_ENERGY (Not enough energy for 'SSTORE' operation "
          "executing: curInvokeEnergyLimit[78572], curOpEnergy[20000], penaltyEnergy[68000], usedEnergy[33567]))")
VERIFIED = ("verified", None)
CASES = {
    "exact payment found by its unique amount": Case("payment", (Pay(),), "PAID", ("10.00",), (VERIFIED,)),
    "a Transfer logged twice in one transaction is one payment of both, found once":
        Case("payment", (Pay(times=2),), "PAID", ("20.00",), (VERIFIED,)),
    "two Transfer logs of 5.00 in one reported transaction are one payment of 10.00":
        Case("payment", (Pay(5_000_000, times=2, report=True),), "PAID", ("10.00",), (VERIFIED,)),
    "two payments to one session in one block":
        Case("payment", (Pay(), Pay(report=True)), "PAID", ("10.00", "10.00"), (VERIFIED, VERIFIED)),
    "out of order: the older transaction reaches the node after the newer":
        Case("payment", (Pay(6_000_000, report=True), Pay(4_000_000, report=True, later=True)), "PAID",
             ("6.00", "4.00"), (VERIFIED, VERIFIED)),
    "a block the node had not got when first scanned is read again: its payment is found":
        Case("payment", (Pay(lagging=True),), "PAID", ("10.00",), (VERIFIED,)),
    "overpayment is recorded in full":
        Case("payment", (Pay(12_000_000, report=True),), "PAID", ("12.00",), (VERIFIED,)),
    "underpayment leaves the rest due": Case("payment", (Pay(7_000_000, report=True),), "PARTIAL_PAID", ("7.00",),
                                             (VERIFIED,)),
    "payment after the session expired is recorded on the canceled order (late)":
        Case("payment", (Pay(),), "CANCELED", ("10.00 (late)",), (VERIFIED,), expired=True),
    "Tether's mainnet contract, symbol USDT, is not Nile's USDT and pays nothing":
        Case("payment", (Pay(10_000_000, token=TETHER, report=True),), "PENDING", (),
             (("rejected", f"moved no stablecoin accepted on {NETWORK}"),)),
    "a transaction that ran out of energy pays nothing":
        Case("payment", (Pay(failed=True, report=True),), "PENDING", (), (("rejected", FAILED),)),
    "refund transfer executes the refund": Case("refund", (Pay(10_000_000),), "EXECUTED", (), (("executed", None),)),
    "refund paid in full to the wrong address": Case("refund", (Pay(10_000_000, to=STRANGER),), "APPROVED", (),
        (("failed", f"sent USDT to {STRANGER}, not to the refund address {BUYER}"),)),
    "refund transaction that failed on chain": Case("refund", (Pay(10_000_000, failed=True),), "APPROVED", (),
                                                    (("failed", FAILED),)),
}


@pytest.fixture
async def tron(pool, watchers) -> AsyncIterator[tuple]:
    chain = Chain()
    await forget_cursors(pool, NETWORK)
    async with TestServer(build_app(chain)) as server:
        network = load_registry(env={"TRON_NILE_RPC_URL": str(server.make_url("/"))}).network(NETWORK)
        yield chain, watchers("tron", (network,), open_adapter)


def send(chain: Chain, block: int, p: Pay, to: str, quoted: int = 0) -> str:
    return replay(chain, block, *[(p.token, p.to or to, p.units or quoted)] * p.times, failed=p.failed)


async def pay(stack, merchant, tron, case: Case) -> tuple[str, tuple]:
    chain, watcher = tron
    receiving = PrivateKey.random().public_key.to_base58check_address()
    await api.receive_on(merchant, NETWORK, receiving)
    created = await quick(merchant, amount="10.00", ttl_seconds=60)
    quoted = await api.unique_amount(stack.pool, merchant, created, NETWORK, receiving)
    if case.expired:
        await expire_due(stack, 120)
        assert (await order(merchant, created["order_id"]))["sessions"][0]["status"] == "EXPIRED"
    block = chain.solid - 2
    for later in (False, True):
        for p in (p for p in case.pays if p.later == later):
            where = block - 1 if later else block
            tx_hash = send(chain, where, p, receiving, quoted)
            if p.lagging:
                chain.lagging.add(where)
            if p.report:
                await report(stack, created["session_key"], NETWORK, tx_hash)
        await watcher.run_once()
        chain.lagging.clear()
    body = await order(merchant, created["order_id"])
    attempts = await stack.pool.fetch("SELECT status, reason FROM payment_attempts WHERE session_id = $1",
                                      created["session_id"])
    payments = tuple(p["amount"] + (" (late)" if p["late"] else "") for p in body["payments"])
    return body["status"], (payments, tuple(sorted((a["status"], a["reason"]) for a in attempts)))


async def refund(stack, merchant, tron, case: Case) -> tuple[str, tuple]:
    chain, watcher = tron
    order_id = await api.paid_order(merchant)
    refund_id = await api.refund(merchant, order_id, "10.00", NETWORK, BUYER, USDT)
    [p] = case.pays
    await api.submit(merchant, refund_id, send(chain, chain.solid - 2, p, BUYER), NETWORK, USDT)
    await watcher.run_once()
    return await refund_outcome(merchant, refund_id)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_edge_case(stack, merchant, tron, case: Case) -> None:
    assert_row(await {"payment": pay, "refund": refund}[case.kind](stack, merchant, tron, case), case)


async def test_one_refund_transaction_posted_for_a_second_refund_is_refused(merchant, tron) -> None:
    chain, watcher = tron
    first, second = [await api.refund(merchant, await api.paid_order(merchant), "10.00", NETWORK, BUYER, USDT)
                     for _ in range(2)]
    tx_hash = send(chain, chain.solid - 2, Pay(10_000_000), BUYER)
    await one_transfer_for_two_refunds(merchant, watcher, [first, second], tx_hash, NETWORK, USDT)
