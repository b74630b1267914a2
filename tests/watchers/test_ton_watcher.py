"""The TON watcher loop on a real pytoniq LiteClient whose liteserver answers come from TL-B cells (the chain suite's
double), for a refund found through the buyer's wallet and a payment found by its comment."""

from __future__ import annotations

import secrets

import pytest
from pytoniq_core import Address

from chain_watchers import references
from chain_watchers.registry import load_registry
from chain_watchers.ton import TonAdapter
from tests.chain.fake_lite_client import (
    FakeLiteClient,
    Ledger,
    internal_message,
    notification_body,
)
from tests.integration.helpers import order, quick
from tests.watchers import api

USDT = "kQD0GKBM8ZbryVk2aESmzfU6b9b_8era_IkvBSELujFZPsyy"  # the testnet jetton master networks.toml lists


def account() -> Address:
    return Address((0, secrets.token_bytes(32)))


def raw(address: Address) -> str:
    return address.to_str(is_user_friendly=False)


class TonChain:
    def __init__(self) -> None:
        self.ledger = Ledger()
        self.master = Address(USDT)
        self.ledger.masters.add(raw(self.master))

    def deposit(self, owner: Address, amount: int, comment: str | None = None) -> str:
        """The owner's jetton wallet notifies it of `amount` (the receiver-side transaction a hash names)."""
        jetton_wallet = self.ledger.wallet_of(self.master, owner)
        body = notification_body(amount, account(), comment)
        return self.ledger.add(owner, internal_message(jetton_wallet, owner, body))


@pytest.fixture
def ton(watchers) -> tuple:
    chain, network = TonChain(), load_registry().network("ton-testnet")

    async def open_adapter(net):
        return TonAdapter(net, FakeLiteClient(chain.ledger))

    return chain, network, watchers("ton", (network,), open_adapter)


async def test_watcher_executes_a_refund_found_through_the_buyers_wallet(merchant, ton) -> None:
    chain, network, watcher = ton
    order_id = await api.paid_order(merchant)
    buyer = account()
    refund_id = await api.refund(merchant, order_id, "10.00", network.slug, raw(buyer), USDT)
    chain.deposit(buyer, 1_000_000)  # an unrelated deposit after which the refund's transaction sits deeper
    tx_hash = chain.deposit(buyer, 10_000_000)
    chain.deposit(buyer, 5)
    await api.submit(merchant, refund_id, tx_hash, network.slug, USDT)

    tick = await watcher.run_once()  # a transaction a lite server returns is final: one tick settles it
    assert tick.refunds == 1
    refund = await api.read_refund(merchant, refund_id)
    assert (refund["status"], [(t["status"], t["confirmations"]) for t in refund["transactions"]]) == (
        "EXECUTED", [("executed", 1)])
    assert (await order(merchant, order_id))["status"] == "REFUNDED"


async def test_watcher_finds_a_payment_by_its_comment_and_resumes_from_the_logical_time(stack, merchant, ton) -> None:
    chain, network, watcher = ton
    receiving = account()
    await api.receive_on(merchant, network.slug, raw(receiving))
    first = await quick(merchant, amount="10.00")
    chain.deposit(receiving, 10_000_000, "not a session")
    paid = chain.deposit(receiving, 10_000_000, references.reference(network, first["session_id"]))

    tick = await watcher.run_once()
    assert (tick.found, tick.payments) == (1, 1)
    body = await order(merchant, first["order_id"])
    assert (body["status"], [p["tx_hash"] for p in body["payments"]]) == ("PAID", [paid])
    assert await api.events(stack.pool, first["order_id"]) == api.SETTLED
    cursor = await stack.pool.fetchval(
        "SELECT position FROM chain_cursors WHERE network = $1 AND scope = $2", network.slug, raw(receiving))
    assert cursor == Ledger._lt(chain.ledger.histories[raw(receiving)][0][0])

    second = await quick(merchant, amount="2.50")
    later = chain.deposit(receiving, 2_500_000, second["session_id"])
    queries = len(chain.ledger.queries)
    tick = await watcher.run_once()
    assert (tick.found, tick.payments) == (1, 1)
    assert [p["tx_hash"] for p in (await order(merchant, second["order_id"]))["payments"]] == [later]
    # From the stored logical time only the new notification is checked against the master (one lookup), then once
    # more when its hash is verified; reading from the start would have checked all three.
    assert chain.ledger.queries[queries:].count("runSmcMethod") == 2
