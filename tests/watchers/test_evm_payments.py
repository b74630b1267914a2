"""Payments on the local EVM chain end to end: HTTP, real ERC-20 transfers, the watcher, the order actor
(docs/spec.md §3.3)."""

from __future__ import annotations

from tests.watchers import api


async def test_payment_reported_by_the_page_settles_the_order_at_the_required_depth(shop) -> None:
    created = await shop.checkout("10.00")
    tx_hash = await shop.send(shop.buyer, shop.wallet, "10.00")
    assert (await shop.report(created["session_key"], tx_hash))[0] == 201

    for depth in (1, 2):
        await shop.tick()
        attempt = await shop.attempt(tx_hash)
        assert (attempt["status"], attempt["confirmations"], attempt["reason"]) == (
            "confirming", depth, f"{depth} of 3 confirmations")
        page = await shop.page_status(created["session_key"])
        assert (page["state"], page["confirmations"]) == ("confirming", {"network": "local", "n": depth, "m": 3})
        assert (await shop.order(created["order_id"]))["status"] == "PENDING"
        await shop.mine(1)

    tick = await shop.tick()
    assert tick.payments == 1
    assert (await shop.attempt(tx_hash))["status"] == "verified"
    order = await shop.order(created["order_id"])
    assert (order["status"], order["amount_paid"], order["amount_due"]) == ("PAID", "10.00", "0.00")
    [payment] = order["payments"]
    assert (payment["network"], payment["tx_hash"], payment["amount"], payment["session_id"], payment["late"]) == (
        "local", tx_hash, "10.00", created["session_id"], False)
    assert payment["token_address"] == shop.chain.token.address
    assert await shop.events(created["order_id"]) == api.SETTLED
    assert (await shop.page_status(created["session_key"]))["state"] == "paid"


async def test_partial_payment_then_residual_found_by_its_unique_amount(shop) -> None:
    created = await shop.checkout("10.00")
    part = await shop.send(shop.buyer, shop.wallet, "4.00")
    assert (await shop.report(created["session_key"], part))[0] == 201
    await shop.mine(2)
    await shop.tick()
    order = await shop.order(created["order_id"])
    assert (order["status"], order["amount_paid"], order["amount_due"]) == ("PARTIAL_PAID", "4.00", "6.00")

    residual = await shop.residual_session(created["order_id"])
    assert residual["amount_due"] == "6.00"
    # Another checkout owes the same 6.00 to the same address: the page quotes each a different amount.
    rival = await shop.checkout("6.00")
    ours = await api.unique_amount(shop.stack.pool, shop.client, residual, "local", shop.wallet)
    theirs = await api.unique_amount(shop.stack.pool, shop.client, rival, "local", shop.wallet)
    assert (ours, theirs) == (6_000_000, 6_000_001)

    # Both buyers pay what their pages quoted and report nothing: the watcher finds both transfers by amount.
    rival_tx = await shop.send(shop.buyer, shop.wallet, "6.000001")
    residual_tx = await shop.send(shop.buyer, shop.wallet, "6.00")
    tick = await shop.tick()
    assert tick.found == 2
    assert (await shop.attempt(residual_tx))["status"] == "confirming"
    await shop.mine(2)
    tick = await shop.tick()
    assert tick.payments == 2

    order = await shop.order(created["order_id"])
    assert (order["status"], order["amount_paid"], order["amount_due"]) == ("PAID", "10.00", "0.00")
    assert [(p["tx_hash"], p["amount"], p["session_id"]) for p in order["payments"]] == [
        (part, "4.00", created["session_id"]), (residual_tx, "6.00", residual["session_id"])]
    assert await shop.events(created["order_id"]) == [
        "order.created", "checkout_session.created", "payment.received", "order.partially_paid",
        "checkout_session.superseded", "checkout_session.created", "payment.received", "checkout_session.completed",
        "payment.settled"]
    rival_order = await shop.order(rival["order_id"])
    assert (rival_order["status"], rival_order["amount_paid"]) == ("PAID", "6.000001")  # overpaid by the offset
    assert rival_order["payments"][0]["tx_hash"] == rival_tx


async def test_overpayment_and_a_second_payment_to_a_paid_order_are_recorded(shop) -> None:
    created = await shop.checkout("5.00")
    first = await shop.send(shop.buyer, shop.wallet, "7.50")
    second = await shop.send(shop.buyer, shop.wallet, "1.00")
    for tx_hash in (first, second):
        assert (await shop.report(created["session_key"], tx_hash))[0] == 201
    await shop.mine(3)
    await shop.tick()
    order = await shop.order(created["order_id"])
    assert (order["status"], order["amount_paid"]) == ("PAID", "8.50")
    assert sorted(p["amount"] for p in order["payments"]) == ["1.00", "7.50"]
    assert (await shop.events(created["order_id"])).count("payment.settled") == 1


async def test_payment_to_another_address_is_rejected_with_the_reason(shop) -> None:
    created = await shop.checkout("10.00")
    tx_hash = await shop.send(shop.buyer, shop.stranger, "10.00")
    assert (await shop.report(created["session_key"], tx_hash))[0] == 201
    await shop.tick()
    attempt = await shop.attempt(tx_hash)
    assert (attempt["status"], attempt["reason"]) == (
        "rejected", f"sent TUSD to {shop.stranger}, not to the merchant's receive address {shop.wallet}")
    assert await shop.events(created["order_id"]) == ["order.created", "checkout_session.created"]


async def test_payment_reorganised_away_waits_to_be_mined_again_then_is_rejected(shop) -> None:
    created = await shop.checkout("10.00")
    snapshot = shop.chain.tester.take_snapshot()
    tx_hash = await shop.send(shop.buyer, shop.wallet, "10.00")
    assert (await shop.report(created["session_key"], tx_hash))[0] == 201
    await shop.tick()
    seen = await shop.attempt(tx_hash)
    assert (seen["status"], seen["confirmations"]) == ("confirming", 1)
    shop.chain.tester.revert_to_snapshot(snapshot)  # eth-tester drops the block's transactions: known nowhere
    await shop.mine(3)
    await shop.tick()
    attempt = await shop.attempt(tx_hash)
    assert (attempt["status"], attempt["confirmations"], attempt["seen_block"], attempt["reason"]) == (
        "confirming", 0, seen["seen_block"],
        f"removed by a chain reorganisation (was in block {seen['seen_block']}); waiting for it to be mined again")

    await api.missing_for(shop.stack.pool, "local", tx_hash, 29)
    await shop.tick()
    assert (await shop.attempt(tx_hash))["status"] == "confirming"
    await api.missing_for(shop.stack.pool, "local", tx_hash, 1)  # WATCH_NOT_FOUND_AFTER_S since it went missing
    await shop.tick()
    attempt = await shop.attempt(tx_hash)
    assert (attempt["status"], attempt["reason"]) == (
        "rejected", (f"dropped after being seen in block {seen['seen_block']}: a chain reorganisation removed it and "
                     "no node has known it for 30 minutes"))
    assert (await shop.order(created["order_id"]))["status"] == "PENDING"
