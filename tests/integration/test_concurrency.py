"""One order under concurrent commands: one consistent final state, a gapless event sequence."""

from __future__ import annotations

import asyncio

from actors import store
from actors.order import replay
from tests.integration.helpers import order, pay, quick


async def test_fifty_concurrent_cancels_and_payments(stack):
    client = await stack.merchant("Busy")
    order_id = (await quick(client))["order_id"]
    cancels = [client.patch(f"/b2b/v1/orders/{order_id}/cancel") for _ in range(25)]
    payments = [pay(client, order_id, "10.00", tx_hash=f"0x{n:064x}") for n in range(25)]
    answers = await asyncio.gather(*[c for pair in zip(cancels, payments) for c in pair])
    cancel_codes = [status for status, _ in answers[0::2]]
    payment_codes = [status for status, _ in answers[1::2]]

    final = await order(client, order_id)
    rows = await stack.pool.fetch("SELECT seq, type FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    types = [r["type"] for r in rows]
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    assert set(payment_codes) == {201}
    assert types.count("payment.received") == 25
    assert final["amount_paid"] == "250.00"
    if final["status"] == "PAID":
        assert cancel_codes.count(200) == 0 and set(cancel_codes) == {409}
        assert types.count("payment.settled") == 1 and "order.canceled" not in types
        assert sum(p["late"] for p in final["payments"]) == 0
    else:
        assert final["status"] == "CANCELED" and final["metadata"]["canceled_reason"] == "merchant_canceled"
        assert cancel_codes.count(200) == 1 and cancel_codes.count(409) == 24
        assert types.count("order.canceled") == 1 and "payment.settled" not in types

    async with stack.pool.acquire() as conn:
        history = await store.history(conn, order_id)
        snapshot = await store.snapshot(conn, order_id)
    assert replay(history) == snapshot
