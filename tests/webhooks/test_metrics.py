"""The webhook metrics move with deliveries (docs/operations.md, Metrics and probes)."""

from __future__ import annotations

from tests.integration.helpers import quick
from tests.support.metrics import here, value
from tests.webhooks.support import Clock, pump, register


async def test_deliveries_move_the_webhook_counter_and_the_retry_queue(stack, merchant, receiver, dispatcher):
    def count(outcome: str) -> float:
        return value(here(), "webhook_deliveries_total", outcome=outcome)

    delivered, retrying = count("delivered"), count("retrying")
    good, bad = await receiver(), await receiver(default=500)
    await register(merchant, good.url, ["order.created"])
    await register(merchant, bad.url, ["order.created"])
    clock = Clock()
    d = await dispatcher(clock=clock)
    await quick(merchant)
    await pump(d, lambda: len(good.requests) >= 1 and len(bad.requests) >= 1)
    assert (count("delivered") - delivered, count("retrying") - retrying) == (1, 1)

    await d.report()
    assert value(here(), "webhook_retry_queue_depth") >= 1  # the failed one waits for its retry
    clock.advance(3 * 3600)  # well past its first retry
    await d.report()
    assert value(here(), "webhook_oldest_due_seconds") > 3600
