"""Fixtures of the card tests: a localstripe process of this run's own, the stack pointed at it, and merchants with
a card account whose webhooks localstripe delivers to the stack."""

from __future__ import annotations

import secrets

import aiohttp
import pytest
from msgspec.structs import replace

from actors.bus import CommandBus
from cards.refunds import Sender
from service.embedded import start_localstripe
from tests.cards.support import CardMerchant
from tests.conftest import running
from tests.dashboard.conftest import staff  # noqa: F401  (a staff user of a fresh merchant)
from tests.e2e.conftest import browser, context, merchant_site, page  # noqa: F401  (Chromium, the shop's site)
from tests.webhooks.conftest import dispatcher, receiver  # noqa: F401  (the merchant's webhook endpoint)


@pytest.fixture(scope="session")
def localstripe(tmp_path_factory):
    stand_in = start_localstripe(tmp_path_factory.mktemp("localstripe"), fresh=True)
    if stand_in is None:
        pytest.fail("localstripe is not installed: `pip install --require-hashes -r requirements/test.txt`")
    yield stand_in
    stand_in.process.terminate()
    stand_in.process.wait(timeout=10)


@pytest.fixture(scope="session")
async def card_stack(settings, pool, redis, keys, localstripe):
    """The web and an actor worker whose STRIPE_API_BASE and STRIPE_JS_URL are the localstripe's."""
    pointed = replace(settings, stripe_api_base=localstripe.api_base, stripe_js_url=localstripe.js_url)
    async with running(pointed, pool, redis, keys) as stack:
        yield stack


@pytest.fixture(scope="session")
def stack(card_stack):
    """Here the shared fixtures (receivers, dispatchers) work on the stack that talks to localstripe."""
    return card_stack


@pytest.fixture
async def card_merchant(card_stack, localstripe) -> CardMerchant:
    client = await card_stack.merchant("Card Shop")
    whsec = f"whsec_{secrets.token_hex(16)}"
    status, body = await client.patch(f"/b2b/v1/merchants/{client.merchant_id}/settings", {"card": {
        "provider": "stripe", "secret_key": f"sk_test_{secrets.token_hex(12)}",
        "publishable_key": f"pk_test_{secrets.token_hex(12)}", "webhook_secret": whsec}})
    assert status == 200, body
    url = f"{card_stack.base_url}/providers/stripe/webhooks/{client.merchant_id}"
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{localstripe.api_base}/_config/webhooks/{client.merchant_id}",
                             json={"url": url, "secret": whsec}) as answer:
            assert answer.status == 200
    return CardMerchant(card_stack, client, localstripe.api_base, whsec)


@pytest.fixture
async def sender(card_stack, redis, keys):
    """The card refund sender as `service cards` runs it, stepped by hand."""
    bus = CommandBus(redis, keys, f"test-cards-{secrets.token_hex(3)}", 5)
    await bus.start()
    yield Sender(card_stack.pool, card_stack.vault, bus, card_stack.settings)
    await bus.stop()
