"""A watcher restarted at any point resumes from PostgreSQL: nothing paid while it was down is missed, nothing is
reported twice."""

from __future__ import annotations

from actors import messages as m
from chain_watchers import store
from common import money
from common.clock import utcnow
from tests.watchers import api


async def test_payment_made_while_the_watcher_was_down_is_found_from_the_stored_cursor(shop, watchers) -> None:
    created = await shop.checkout("12.00")
    quoted = await api.unique_amount(shop.stack.pool, shop.client, created, "local", shop.wallet)
    await shop.tick()
    cursor = await shop.stack.pool.fetchval("SELECT position FROM chain_cursors WHERE network = 'local' AND scope = ''")
    assert cursor is not None
    await shop.watcher.close()  # down

    await shop.mine(10)  # the chain moves on; the payment lands well past the block the old watcher stopped at
    tx_hash = await shop.send(shop.buyer, shop.wallet, money.format(quoted))
    await shop.mine(5)

    # Without the stored cursor this watcher would start at the head and miss the payment.
    restarted = shop.new_watcher(lambda *args: watchers(*args, first_lookback=0))
    tick = await restarted.run_once()
    assert (tick.found, tick.payments) == (1, 1)
    order = await shop.order(created["order_id"])
    assert (order["status"], [p["tx_hash"] for p in order["payments"]]) == ("PAID", [tx_hash])
    moved = await shop.stack.pool.fetchval("SELECT position FROM chain_cursors WHERE network = 'local' AND scope = ''")
    assert moved > cursor

    again = await shop.new_watcher(watchers).run_once()
    assert (again.found, again.payments) == (0, 0)
    assert (await shop.events(created["order_id"])).count("payment.received") == 1


async def test_crash_after_the_payment_reached_the_actor_does_not_pay_twice(shop, watchers, monkeypatch) -> None:
    created = await shop.checkout("10.00")
    tx_hash = await shop.send(shop.buyer, shop.wallet, "10.00")
    assert (await shop.report(created["session_key"], tx_hash))[0] == 201
    await shop.mine(2)

    async def crash(*args, **kwargs):
        raise ConnectionResetError("the process died here")

    with monkeypatch.context() as patched:
        patched.setattr(store, "attempt_progress", crash)
        tick = await shop.tick()
    assert tick.failed == ("local",)  # the payment was told, the attempt's row never learnt it
    assert (await shop.attempt(tx_hash))["status"] == "reported"
    assert (await shop.order(created["order_id"]))["status"] == "PAID"

    tick = await shop.new_watcher(watchers).run_once()
    assert tick.payments == 1  # told again, under the same command id
    assert (await shop.attempt(tx_hash))["status"] == "verified"
    order = await shop.order(created["order_id"])
    assert (order["amount_paid"], len(order["payments"])) == ("10.00", 1)
    assert (await shop.events(created["order_id"])).count("payment.received") == 1


async def test_refund_verdict_left_in_the_stream_by_a_dead_watcher_executes_once(shop, bus) -> None:
    order_id = (await shop.paid("10.00"))["order_id"]
    refund_id = await shop.refund(order_id, "4.00")
    tx_hash = await shop.send(shop.wallet, shop.buyer, "4.00")
    await shop.submit(refund_id, tx_hash)
    await shop.mine(2)
    # The previous watcher sent its verdict and died before hearing back; the new one sends it again.
    left_behind = m.ConfirmRefundTransfer(
        order_id=order_id, merchant_id=shop.client.merchant_id, livemode=False, at=utcnow(), refund_id=refund_id,
        network="local", tx_hash=tx_hash, token_address=shop.chain.token.address)
    await bus.send(m.Envelope(command_id=f"watch:refund-executed:local:{tx_hash}", command=left_behind))
    await shop.tick()
    await shop.tick()
    assert (await shop.read_refund(refund_id))["status"] == "EXECUTED"
    order = await shop.order(order_id)
    assert (order["status"], order["amount_refunded"]) == ("PARTIALLY_REFUNDED", "4.00")
    assert (await shop.events(order_id)).count("payment.refund.executed") == 1
