"""Refunds executed on the local EVM chain end to end: submit-tx over HTTP, real transfers, the watcher
(docs/spec.md §3.1)."""

from __future__ import annotations

import pytest

from tests.watchers import api

REFUND_EVENTS = ["payment.refund.requested", "payment.refund.approved", "payment.refund.tx_submitted"]


async def test_refund_executes_once_its_transfer_is_deep_enough(shop) -> None:
    created = await shop.paid("10.00")
    order_id = created["order_id"]
    before = await shop.events(order_id)
    refund_id = await shop.refund(order_id, "3.00")
    tx_hash = await shop.send(shop.wallet, shop.buyer, "3.00")
    answer = await shop.submit(refund_id, tx_hash)
    assert (answer["status"], answer["verification"]["status"], answer["verification"]["required"]) == (
        "APPROVED", "verifying", 3)

    for depth in (1, 2):
        await shop.tick()
        [tx] = (await shop.read_refund(refund_id))["transactions"]
        assert (tx["status"], tx["confirmations"], tx["required"]) == ("verifying", depth, 3)
        assert (await shop.read_refund(refund_id))["status"] == "APPROVED"
        await shop.mine(1)
    tick = await shop.tick()
    assert tick.refunds == 1

    refund = await shop.read_refund(refund_id)
    assert refund["status"] == "EXECUTED"
    assert refund["execution"] == {"tx_hash": tx_hash, "network": "local", "token_address": shop.chain.token.address}
    assert [(t["status"], t["confirmations"]) for t in refund["transactions"]] == [("executed", 3)]
    order = await shop.order(order_id)
    assert (order["status"], order["amount_paid"], order["amount_refunded"]) == ("PARTIALLY_REFUNDED", "10.00", "3.00")
    assert (await shop.events(order_id))[len(before):] == REFUND_EVENTS + ["payment.refund.executed"]

    # The rest of the paid amount, in a second refund: the order is then REFUNDED.
    last = await shop.refund(order_id, "7.00")
    await shop.submit(last, await shop.send(shop.wallet, shop.buyer, "7.00"))
    await shop.mine(2)
    await shop.tick()
    order = await shop.order(order_id)
    assert (order["status"], order["amount_refunded"]) == ("REFUNDED", "10.00")
    assert (await shop.events(order_id)).count("payment.refund.executed") == 2


async def _reverted(shop) -> str:
    return await shop.send(shop.stranger, shop.buyer, "3.00")  # the stranger holds no TestUSD: status 0


async def _elsewhere(shop) -> str:
    return await shop.send(shop.wallet, shop.stranger, "3.00")


async def _too_small(shop) -> str:
    return await shop.send(shop.wallet, shop.buyer, "2.99")


REFUSALS = [
    ("reverted", _reverted, "the transaction failed on chain (failed: reverted (receipt status 0))"),
    ("wrong-recipient", _elsewhere, "sent TUSD to {stranger}, not to the refund address {buyer}"),
    ("too-small", _too_small, "moved 2.99 TUSD to the refund address, less than the 3 owed"),
]


@pytest.mark.parametrize(("send", "reason"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
async def test_refused_transfer_is_recorded_and_the_refund_stays_approved(shop, send, reason) -> None:
    order_id = (await shop.paid("10.00"))["order_id"]
    refund_id = await shop.refund(order_id, "3.00")
    bad = await send(shop)
    await shop.submit(refund_id, bad)
    tick = await shop.tick()
    assert tick.refunds == 1
    expected = reason.format(stranger=shop.stranger, buyer=shop.buyer)
    refund = await shop.read_refund(refund_id)
    assert refund["status"] == "APPROVED"
    assert [(t["tx_hash"], t["status"], t["reason"]) for t in refund["transactions"]] == [(bad, "failed", expected)]
    events = await shop.events(order_id)
    assert events[-2:] == ["payment.refund.tx_submitted", "payment.refund.tx_failed"]
    assert (await shop.order(order_id))["status"] == "PAID"

    # A new hash pays it.
    good = await shop.send(shop.wallet, shop.buyer, "3.00")
    await shop.submit(refund_id, good)
    await shop.mine(2)
    await shop.tick()
    assert (await shop.read_refund(refund_id))["status"] == "EXECUTED"
    assert (await shop.order(order_id))["amount_refunded"] == "3.00"


async def test_refund_transfer_reorganised_away_waits_to_be_mined_again_then_fails(shop) -> None:
    order_id = (await shop.paid("10.00"))["order_id"]
    refund_id = await shop.refund(order_id, "3.00")
    snapshot = shop.chain.tester.take_snapshot()
    tx_hash = await shop.send(shop.wallet, shop.buyer, "3.00")
    await shop.submit(refund_id, tx_hash)
    await shop.mine(1)
    await shop.tick()
    [tx] = (await shop.read_refund(refund_id))["transactions"]
    assert (tx["status"], tx["confirmations"]) == ("verifying", 2)
    seen_block = await shop.stack.pool.fetchval(
        "SELECT seen_block FROM refund_transfer_checks WHERE network = 'local' AND tx_hash = $1", tx_hash)

    shop.chain.tester.revert_to_snapshot(snapshot)  # the two blocks holding the transfer leave the chain
    await shop.mine(4)
    await shop.tick()
    [tx] = (await shop.read_refund(refund_id))["transactions"]
    assert (tx["status"], tx["confirmations"]) == ("verifying", 0)
    check = await shop.stack.pool.fetchrow(
        "SELECT seen_block, missing_since FROM refund_transfer_checks WHERE network = 'local' AND tx_hash = $1",
        tx_hash)
    assert (check["seen_block"], check["missing_since"] is not None) == (seen_block, True)

    await api.missing_for(shop.stack.pool, "local", tx_hash, 30)  # WATCH_NOT_FOUND_AFTER_S since it went missing
    tick = await shop.tick()
    assert tick.refunds == 1
    refund = await shop.read_refund(refund_id)
    assert refund["status"] == "APPROVED"
    assert refund["transactions"][0]["status"] == "failed"
    assert refund["transactions"][0]["reason"] == (
        f"dropped after being seen in block {seen_block}: a chain reorganisation removed it and no node has known it "
        "for 30 minutes")
    order = await shop.order(order_id)
    assert (order["status"], order["amount_refunded"]) == ("PAID", "0.00")
    assert (await shop.events(order_id))[-1] == "payment.refund.tx_failed"


async def test_transaction_nobody_knows_is_refused_after_the_deadline(shop, watchers) -> None:
    order_id = (await shop.paid("10.00"))["order_id"]
    refund_id = await shop.refund(order_id, "3.00")
    await shop.submit(refund_id, "0x" + "5a" * 32)
    await shop.tick()
    assert (await shop.read_refund(refund_id))["transactions"][0]["status"] == "verifying"
    impatient = shop.new_watcher(lambda *a: watchers(*a, not_found_after_s=0))
    await impatient.run_once()
    [tx] = (await shop.read_refund(refund_id))["transactions"]
    assert (tx["status"], tx["reason"].startswith("not found on local 0 minutes after")) == ("failed", True)
    assert (await shop.read_refund(refund_id))["status"] == "APPROVED"
