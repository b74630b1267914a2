"""The Solana watcher loop on solana-py's AsyncClient (built by open_adapter) against the local JSON-RPC cluster."""

from __future__ import annotations

from chain_watchers import references
from tests.chain.fake_solana_rpc import FINALIZED_DEPTH
from tests.integration.helpers import order, quick
from tests.watchers import api
from tests.watchers.solana_refund import USDC, refund_on, wallet
from web.pages import quotes


async def test_watcher_executes_a_refund_once_the_slot_is_finalized(merchant, solana) -> None:
    cluster, _network, watcher = solana
    order_id, refund_id, signature = await refund_on(cluster, merchant, "3.00", depth=5)

    await watcher.run_once()
    [tx] = (await api.read_refund(merchant, refund_id))["transactions"]
    assert (tx["status"], tx["confirmations"], tx["required"]) == ("verifying", 5, 32)
    cluster.head += FINALIZED_DEPTH - 5
    tick = await watcher.run_once()
    assert tick.refunds == 1
    refund = await api.read_refund(merchant, refund_id)
    assert (refund["status"], refund["execution"]["tx_hash"]) == ("EXECUTED", signature)
    assert (await order(merchant, order_id))["amount_refunded"] == "3.00"


async def test_watcher_finds_a_solana_pay_payment_by_its_reference_key(stack, merchant, solana) -> None:
    cluster, network, watcher = solana
    receiving = wallet()
    await api.receive_on(merchant, network.slug, receiving)
    created = await quick(merchant, amount="10.00")
    reference = references.reference(network, created["session_id"])
    assert reference == quotes.reference(network, created["session_id"])  # what the page's link carries
    paid = cluster.add_transfer(slot=cluster.head - FINALIZED_DEPTH, mint=USDC, sender=wallet(), recipient=receiving,
                                amount=10_000_000, reference=reference)
    cluster.add_transfer(slot=cluster.head - FINALIZED_DEPTH, mint=USDC, sender=wallet(), recipient=receiving,
                         amount=10_000_000)  # someone else's payment, without the reference

    tick = await watcher.run_once()
    assert (tick.found, tick.payments) == (1, 1)
    body = await order(merchant, created["order_id"])
    assert (body["status"], [(p["tx_hash"], p["amount"]) for p in body["payments"]]) == ("PAID", [(paid, "10.00")])
    assert await api.events(stack.pool, created["order_id"]) == api.SETTLED
