"""A crash between the provider's answer and the order's commit still ends with exactly one provider refund: the
actors are a real process killed before it commits the batch holding the provider's report."""

from __future__ import annotations

import secrets

import aiohttp
import pytest
import redis.asyncio as aioredis
from msgspec.structs import replace

from actors.bus import CommandBus
from actors.views import stored_view
from cards.refunds import Sender
from common.secrets import Vault
from streams.names import Keys
from streams.producer import ReplyTimeout
from tests.cards.support import CardMerchant
from tests.integration.helpers import until
from tests.integration.test_crash import _exited, isolated  # noqa: F401  (the fixture, with the settings below)


async def order_and_refund(pool, refund_id: str):
    row = await pool.fetchrow("SELECT o.state, o.state_schema FROM refunds r JOIN orders o USING (order_id)"
                              " WHERE r.refund_id = $1", refund_id)
    order = stored_view(row["state"], row["state_schema"])
    return order, order.refund(refund_id)


@pytest.fixture(scope="session")
def settings(settings, localstripe):
    """The crash suite's isolated stack, pointed at this run's localstripe (it differs in nothing else)."""
    return replace(settings, stripe_api_base=localstripe.api_base, stripe_js_url=localstripe.js_url)


async def test_actors_killed_after_the_provider_answered_leave_exactly_one_provider_refund(
        isolated, localstripe):  # noqa: F811
    client, start_worker, own, pool = isolated
    healthy = start_worker()
    whsec = f"whsec_{secrets.token_hex(16)}"
    status, body = await client.patch(f"/b2b/v1/merchants/{client.merchant_id}/settings", {"card": {
        "provider": "stripe", "secret_key": "sk_test_crash000", "publishable_key": "pk_test_crash000",
        "webhook_secret": whsec}})
    assert status == 200, body
    async with aiohttp.ClientSession() as http:
        await http.post(f"{localstripe.api_base}/_config/webhooks/{client.merchant_id}",
                        json={"url": f"{client.base_url}/providers/stripe/webhooks/{client.merchant_id}",
                              "secret": whsec})
    shop = CardMerchant(None, client, localstripe.api_base, whsec)
    status, created = await client.post("/b2b/v1/checkout-sessions/quick", {"amount": "8.00"})
    card = await shop.card()
    async with client.http.post(f"{client.base_url}/c/{created['session_key']}/card-payments",
                                json={"payment_method": card}) as answer:
        assert answer.status == 201
    paid = await until(client, created["order_id"], lambda o: o["status"] == "PAID", timeout=15)
    payment_id = paid["payments"][0]["tx_hash"]
    status, refund = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds",
                                       {"order_id": created["order_id"], "amount": "8.00"})
    assert status == 201, refund
    healthy.terminate()
    await _exited(healthy)

    redis = aioredis.Redis.from_url(own.redis_url)
    bus = CommandBus(redis, Keys(own.redis_prefix, own.partitions), "test-cards-crash", 3)
    await bus.start()
    try:
        doomed = start_worker("before_commit")
        sender = Sender(pool, Vault(own.master_key.encode()), bus, own)
        with pytest.raises(ReplyTimeout):  # the provider answered; the actor died before committing its report
            await sender.follow(*await order_and_refund(pool, refund["refund_id"]))
        assert await _exited(doomed) == 137
        assert len(await shop.provider_refunds(payment_id)) == 1
        assert await pool.fetchval("SELECT status FROM refunds WHERE refund_id = $1", refund["refund_id"]) == "APPROVED"

        start_worker()
        # Finds the provider refund the lost report named and reports it again; nothing is sent twice.
        assert await sender.follow(*await order_and_refund(pool, refund["refund_id"])) == 1
        done = await until(client, created["order_id"], lambda o: o["status"] == "REFUNDED", timeout=15)
    finally:
        await bus.stop()
        await redis.aclose()
    assert done["status"] == "REFUNDED"
    [provider_refund] = await shop.provider_refunds(payment_id)
    status, read = await client.get(f"/b2b/v1/refunds/{refund['refund_id']}")
    assert read["status"] == "EXECUTED" and read["execution"]["tx_hash"] == provider_refund.id
    events = [r["type"] for r in await pool.fetch("SELECT type FROM events WHERE order_id = $1", created["order_id"])]
    assert events.count("payment.refund.executed") == 1
