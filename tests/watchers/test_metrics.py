"""A watcher's chain gauges move with its ticks (docs/operations.md, Metrics and probes)."""

from __future__ import annotations

from tests.support.metrics import here, value


async def test_a_watcher_tick_moves_its_chain_gauges(shop):
    slug, depth = shop.network.slug, shop.network.confirmations

    def gauges_now() -> tuple[float, float, float]:
        text = here()
        return tuple(value(text, name, network=slug) for name in ("watcher_head", "watcher_processed", "watcher_lag"))

    ticks = value(here(), "watcher_ticks_total", network=slug, outcome="ok")
    await shop.tick()
    head = await shop.chain.w3.eth.block_number
    assert gauges_now() == (head, head - depth + 1, depth - 1)
    await shop.mine(4)
    await shop.tick()
    assert gauges_now() == (head + 4, head + 4 - depth + 1, depth - 1)
    assert value(here(), "watcher_ticks_total", network=slug, outcome="ok") - ticks == 2
