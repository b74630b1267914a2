"""A hanging endpoint holds only its own lane: another merchant's deliveries go out at once."""

from __future__ import annotations

import asyncio
import time

from tests.integration.helpers import quick
from tests.webhooks.support import HANG, register

TIMEOUT_S = 2.0


async def _attempts(stack, endpoint_id: str, at_least: int) -> list:
    for _ in range(50):
        rows = await stack.pool.fetch(
            "SELECT a.error, a.latency_ms FROM webhook_attempts a JOIN webhook_deliveries d USING (delivery_id)"
            " WHERE d.endpoint_id = $1", endpoint_id)
        if len(rows) >= at_least:
            return rows
        await asyncio.sleep(0.1)
    return rows


async def test_hanging_endpoint_does_not_delay_another_merchants_deliveries(stack, merchant, receiver, dispatcher):
    slow, fast = await receiver(default=HANG), await receiver()
    other = await stack.merchant("Other")
    hanging = await register(merchant, slow.url)
    await register(other, fast.url)
    d = await dispatcher(timeout_s=TIMEOUT_S, per_endpoint=2)
    stop = asyncio.Event()
    running = asyncio.create_task(d.run(stop))
    try:
        # Six deliveries for the hanging endpoint: three times its lane's width.
        for _ in range(3):
            await quick(merchant)
        await slow.wait_for(2)
        started = time.monotonic()
        await quick(other)
        await fast.wait_for(2, timeout=TIMEOUT_S * 3)
        waited = time.monotonic() - started
        assert len(fast.requests) == 2
        assert waited < TIMEOUT_S / 2, f"the other merchant waited {waited:.2f} s"
        assert len(slow.requests) == 2  # its lane is full: the rest wait their turn, not anyone else's
        # The hanging attempts end at the timeout, recorded as such, and the lane moves on.
        await slow.wait_for(3, timeout=TIMEOUT_S * 2)
        rows = await _attempts(stack, hanging["id"], 2)
        assert len(rows) == 2 and all(r["error"].startswith("timeout") for r in rows)
        assert all(TIMEOUT_S * 1000 * 0.9 <= r["latency_ms"] < TIMEOUT_S * 1000 * 1.5 for r in rows)
    finally:
        stop.set()
        await slow.stop()  # ends the hanging requests so the dispatcher closes quickly
        await running
