"""Drive an order into a state through the public API, as a merchant's backend would."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import redis.asyncio as aioredis

from actors.bus import CommandBus
from service.scheduler import Timers
from streams.names import Keys

QUICK = "/b2b/v1/checkout-sessions/quick"
USDT = "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"  # on sepolia: test mode pays on test networks only


async def quick(client, **body) -> dict:
    status, created = await client.post(QUICK, {"amount": "10.00", **body})
    assert status == 201, created
    return created


async def pay(client, order_id: str, amount: str, headers: dict | None = None, **extra) -> tuple[int, dict]:
    payload = {"amount": amount, "network": "sepolia", "token_address": USDT, **extra}
    return await client.post(f"/b2b/v1/test-helpers/orders/{order_id}/payments", payload, headers=headers)


async def order(client, order_id: str) -> dict:
    status, body = await client.get(f"/b2b/v1/orders/{order_id}")
    assert status == 200, body
    return body


async def expire_due(stack, seconds_ahead: int) -> int:
    """Run the scheduler's sweep on the stack's clock moved forward; returns how many it sent."""
    settings = stack.settings
    redis = aioredis.Redis.from_url(settings.redis_url)
    bus = CommandBus(redis, Keys(settings.redis_prefix, settings.partitions), "test-scheduler", 5)
    await bus.start()
    try:
        sweep = Timers(stack.pool, bus, clock=lambda: stack.clock() + timedelta(seconds=seconds_ahead))
        return await sweep.sweep()
    finally:
        await bus.stop()
        await redis.aclose()


async def until(client, order_id: str, predicate, timeout: float = 5.0) -> dict:
    """The order once predicate(order) holds, for effects that arrive through the actors."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        body = await order(client, order_id)
        if predicate(body) or asyncio.get_running_loop().time() > deadline:
            return body
        await asyncio.sleep(0.05)
