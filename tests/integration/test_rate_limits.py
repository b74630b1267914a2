"""Rate limits (docs/api.md, Rate limits): a token bucket per API key, per client IP on the hosted pages."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys

import msgspec
import pytest
from aiohttp.test_utils import TestServer

from accounts import merchants
from streams.names import Keys
from testkit.signed import Signed
from tests.conftest import running
from tests.support.waiting import until
from web.app import init_app

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


@pytest.fixture
async def limited(settings, stack):
    """The service with small limits, under a Redis prefix of its own so its buckets start full."""
    small = msgspec.structs.replace(settings, redis_prefix=f"{settings.redis_prefix}rl{secrets.token_hex(3)}:",
                                    rate_limit_rps=1, rate_limit_burst=3, page_rate_limit_rps=1,
                                    page_rate_limit_burst=4)
    server = TestServer(init_app(small))
    await server.start_server()
    yield server
    await server.close()


async def _client(stack, server) -> Signed:
    made = await stack.merchant("Limited")
    return Signed(stack.http, str(server.make_url("")).rstrip("/"), made.public_key, made.secret_key, made.merchant_id)


async def _get(client: Signed, path: str = "/b2b/v1/orders"):
    headers = await client.fresh_headers("GET", path, b"")
    async with client.http.get(client.base_url + path, headers=headers) as resp:
        return resp.status, resp.headers, await resp.json()


def _within(refusal_headers) -> float:
    """How long a refused caller may have to wait for its token: Retry-After, and a margin for a slow box. A request
    refused meanwhile takes no token (streams/buckets.py), so asking again until answered does not delay it."""
    return int(refusal_headers["Retry-After"]) + 5


async def _answered(request, status: int = 200) -> bool:
    return (await request)[0] == status


async def test_over_the_limit_is_429_with_headers_then_recovers(stack, limited):
    client = await _client(stack, limited)
    for left in (2, 1, 0):
        status, headers, _ = await _get(client)
        assert status == 200
        assert (headers["X-RateLimit-Limit"], headers["X-RateLimit-Remaining"]) == ("3", str(left))
        assert int(headers["X-RateLimit-Reset"]) >= 1
    status, headers, body = await _get(client)
    assert status == 429
    assert body["error"]["type"] == "rate_limit_error" and body["error"]["code"] == "rate_limited"
    assert headers["Retry-After"] == "1" and headers["X-RateLimit-Remaining"] == "0"
    assert all(name in headers for name in LIMIT_HEADERS)
    await until(lambda: _answered(_get(client)), "a token back after Retry-After", timeout=_within(headers))


async def test_errors_carry_the_headers_too(stack, limited):
    client = await _client(stack, limited)
    status, headers, body = await _get(client, "/b2b/v1/orders/ord_missing")
    assert status == 404 and headers["X-RateLimit-Remaining"] == "2"


async def test_each_key_has_its_own_bucket(stack, limited):
    first, second = await _client(stack, limited), await _client(stack, limited)
    for _ in range(3):
        assert (await _get(first))[0] == 200
    assert (await _get(first))[0] == 429
    assert (await _get(second))[0] == 200


async def test_a_merchant_of_its_own_limits(stack, limited):
    raised, default = await _client(stack, limited), await _client(stack, limited)
    await merchants.set_rate_limit(stack.pool, raised.merchant_id, 1, 6)
    statuses = [(await _get(raised))[0] for _ in range(7)]
    assert statuses == [200] * 6 + [429]
    assert [(await _get(default))[0] for _ in range(4)] == [200] * 3 + [429]


async def test_limits_are_set_through_the_cli(stack, limited):
    client = await _client(stack, limited)
    env = dict(os.environ, DATABASE_URL=stack.settings.database_url, SERVICE_MASTER_KEY=stack.settings.master_key,
               PYTHONPATH=ROOT)
    run = subprocess.run([sys.executable, "-m", "service", "merchants", "limits", client.merchant_id, "--rps", "50",
                          "--burst", "5", "--json"], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == {"merchant_id": client.merchant_id, "rps": 50, "burst": 5, "own": True}
    status, headers, _ = await _get(client)
    assert status == 200 and headers["X-RateLimit-Limit"] == "5"
    run = subprocess.run([sys.executable, "-m", "service", "merchants", "limits", client.merchant_id, "--default",
                          "--json"], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(run.stdout)["own"] is False


async def test_hosted_pages_are_limited_per_client_address(stack, limited):
    base = str(limited.make_url("")).rstrip("/")
    created = (await stack.merchant()).post
    order = (await created("/b2b/v1/checkout-sessions/quick", {"amount": "3.00"}))[1]
    statuses = []
    for _ in range(5):
        async with stack.http.get(f"{base}/c/{order['session_key']}/status") as resp:
            statuses.append(resp.status)
            last = resp
    assert statuses == [200] * 4 + [429]
    assert last.headers["Retry-After"] == "1"


async def test_unknown_tokens_from_one_address_are_slowed_down(stack, settings):
    app_settings = msgspec.structs.replace(settings, redis_prefix=f"{settings.redis_prefix}tg{secrets.token_hex(3)}:")
    server = TestServer(init_app(app_settings))
    await server.start_server()
    base = str(server.make_url("")).rstrip("/")
    try:
        guesses = []
        for n in range(21):
            async with stack.http.get(f"{base}/refund-request/rfqt_guess{n}") as resp:
                guesses.append(resp.status)
        assert guesses == [404] * 20 + [429]
        async with stack.http.get(f"{base}/r/rl_guess.json") as resp:
            body = await resp.json()
            assert resp.status == 429 and body["error"]["code"] == "too_many_unknown_tokens"
            assert int(resp.headers["Retry-After"]) >= 1
    finally:
        await server.close()


@pytest.fixture
async def limited_stack(settings, pool, redis):
    """Web and actors with small limits, under a Redis prefix of their own: writes need their commands answered."""
    small = msgspec.structs.replace(settings, redis_prefix=f"{settings.redis_prefix}rw{secrets.token_hex(3)}:",
                                    rate_limit_rps=1, rate_limit_burst=3)
    async with running(small, pool, redis, Keys(small.redis_prefix, small.partitions)) as stack:
        yield stack


async def _post(client: Signed, payload, path: str = "/b2b/v1/checkout-sessions/quick", key: str | None = None):
    body = json.dumps(payload).encode()
    headers = await client.fresh_headers("POST", path, body) | ({"Idempotency-Key": key} if key else {})
    async with client.http.post(client.base_url + path, data=body, headers=headers) as resp:
        return resp.status, resp.headers, await resp.json()


async def test_writes_take_their_token_with_their_command_and_one_refused_creates_nothing(limited_stack):
    stack = limited_stack
    client = await stack.merchant()
    # Sent together, so the tokens are taken within milliseconds: one at a time, each waiting for its order, a slow
    # box gave the bucket (one token a second) time to refill before the fourth.
    answers = await asyncio.gather(*(_post(client, {"amount": "1.00", "external_ref": f"write-{n}"})
                                     for n in range(4)))
    accepted = [headers["X-RateLimit-Remaining"] for status, headers, _ in answers if status == 201]
    refused = [(n, headers, body) for n, (status, headers, body) in enumerate(answers) if status == 429]
    assert sorted(accepted) == ["0", "1", "2"] and len(refused) == 1, answers
    [(over, headers, body)] = refused
    assert body["error"]["code"] == "rate_limited"
    assert headers["Retry-After"] == "1" and headers["X-RateLimit-Limit"] == "3"
    orders = await stack.pool.fetch("SELECT external_ref FROM orders WHERE merchant_id = $1", client.merchant_id)
    assert len(orders) == 3 and f"write-{over}" not in {o["external_ref"] for o in orders}
    # The refused request's signature was not spent: signed again, the same write goes through once a token is back.
    await until(lambda: _answered(_post(client, {"amount": "1.00", "external_ref": "over-the-limit"}), 201),
                "the write accepted after Retry-After", timeout=_within(headers))


async def test_writes_refused_before_their_command_take_tokens_too(limited_stack):
    stack = limited_stack
    client = await stack.merchant()
    for left in (2, 1, 0):
        status, headers, body = await _post(client, {"amount": "-1"})
        assert status == 422 and headers["X-RateLimit-Remaining"] == str(left), body
    status, _, body = await _post(client, {"amount": "1.00"})
    assert status == 429 and body["error"]["code"] == "rate_limited"
    assert await stack.pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1", client.merchant_id) == 0


async def test_a_keyed_retry_takes_a_token_and_gets_the_first_answer(limited_stack):
    client = await limited_stack.merchant()
    key = f"retry-{secrets.token_hex(4)}"
    first = await _post(client, {"amount": "2.00"}, key=key)
    again = await _post(client, {"amount": "2.00"}, key=key)
    assert (first[0], again[0]) == (201, 201) and first[2]["order_id"] == again[2]["order_id"]
    assert again[1]["X-RateLimit-Remaining"] == "1"
