"""Webhook fixtures: started receivers and in-process dispatchers on the stack's events stream."""

from __future__ import annotations

import secrets

import pytest

from common.clock import utcnow
from common.secrets import Vault
from tests.webhooks.support import Receiver
from webhooks.dispatcher import Dispatcher
from webhooks.settings import WebhookSettings


@pytest.fixture
async def receiver(stack):
    """A factory of started receivers; their endpoints are disabled afterwards so no later test's
    sweep keeps retrying deliveries to a closed port."""
    made: list[Receiver] = []

    async def make(script: list | None = None, default: int | str = 200, delay_s: float = 0.0) -> Receiver:
        r = await Receiver(script, default, delay_s).start()
        made.append(r)
        return r

    yield make
    for r in made:
        await r.stop()
        ids = [row["endpoint_id"] for row in await stack.pool.fetch(
            "UPDATE webhook_endpoints SET status = 'disabled' WHERE url LIKE $1 RETURNING endpoint_id", r.url + "%")]
        await stack.pool.execute("UPDATE webhook_deliveries SET status = 'failed' WHERE endpoint_id = ANY($1)"
                                 " AND status = 'pending'", ids)


@pytest.fixture
async def dispatcher(stack, redis, keys):
    """A factory of dispatchers reading the stack's events stream from now on, each through a
    consumer group of its own; on the real clock unless given one."""
    made: list[tuple[Dispatcher, str]] = []

    async def make(clock=None, jitter=lambda: 1.0, **knobs) -> Dispatcher:
        group = f"test-{secrets.token_hex(4)}"
        d = Dispatcher(stack.pool, redis, keys, Vault(stack.settings.master_key.encode()),
                       WebhookSettings(**knobs), clock=clock or utcnow, jitter=jitter, group=group)
        await d.start(from_id="$")
        made.append((d, group))
        return d

    yield make
    for d, group in made:
        await d.close()
        await redis.xgroup_destroy(keys.events, group)
