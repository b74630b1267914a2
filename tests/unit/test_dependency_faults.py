"""A dependency's fault is answered 503 (naming the command sent, when one was), never 500: what asyncpg raises
while PostgreSQL fails over included. And the API keys a web process knows serve on while PostgreSQL is away."""

from __future__ import annotations

import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from common import faults
from common.merchants import ApiKey
from web import key_cache
from web.context import COMMAND_ID
from web.errors import error_middleware
from web.key_cache import KeyCache

# What a failover showed, each raised by asyncpg while a request or a batch used the database.
FAILOVER_FAULTS = [
    asyncpg.InternalClientError("cannot switch to state 15; another operation is in progress"),
    asyncpg.exceptions.TargetServerAttributeNotMatched("None of the hosts match the target attribute requirement"),
    asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
    asyncpg.AdminShutdownError("terminating connection due to administrator command"),
    asyncpg.CannotConnectNowError("the database system is shutting down"),
    asyncpg.ReadOnlySQLTransactionError("cannot execute INSERT in a read-only transaction"),
    ConnectionResetError("Connection reset by peer"),
]


@pytest.mark.parametrize("exc", FAILOVER_FAULTS, ids=lambda e: type(e).__name__)
def test_a_failover_s_faults_are_a_dependency_away(exc):
    assert isinstance(exc, faults.UNAVAILABLE)


@pytest.mark.parametrize("exc", [asyncpg.UniqueViolationError("duplicate key"), ValueError("a bug")],
                         ids=lambda e: type(e).__name__)
def test_faults_of_this_code_or_its_data_are_not(exc):
    assert not isinstance(exc, faults.UNAVAILABLE)


async def _answer(raised: Exception, command_id: str | None) -> tuple[int, dict]:
    async def handler(request: web.Request) -> web.Response:
        if command_id:
            request[COMMAND_ID] = command_id
        raise raised

    app = web.Application(middlewares=[error_middleware])
    app.router.add_post("/b2b/v1/checkout-sessions/quick", handler)
    async with TestClient(TestServer(app)) as client:
        resp = await client.post("/b2b/v1/checkout-sessions/quick")
        return resp.status, await resp.json()


async def test_a_pool_connection_dying_mid_query_is_a_503_naming_the_command():
    status, body = await _answer(FAILOVER_FAULTS[0], "cmd_0123")
    assert status == 503, body
    assert body["error"]["code"] == "service_unavailable" and body["error"]["command_id"] == "cmd_0123"


async def test_a_503_before_any_command_names_none():
    status, body = await _answer(FAILOVER_FAULTS[1], None)
    assert status == 503 and "command_id" not in body["error"]


def _key() -> ApiKey:
    return ApiKey(public_key="pk_test_a", merchant_id="mer_a", livemode=False, secret="sk_test_a")


def test_a_key_serves_on_for_a_while_after_it_expired(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(key_cache.time, "monotonic", lambda: now[0])
    cache = KeyCache()
    cache.put("pk_test_a", _key())
    cache.put("pk_test_missing", None)
    now[0] += key_cache.HIT_S + 1
    assert cache.get("pk_test_a") == (False, None)  # asked again from PostgreSQL first
    assert cache.stale("pk_test_a") == _key()
    assert cache.stale("pk_test_missing") is None and cache.stale("pk_test_never") is None
    now[0] += key_cache.STALE_S
    assert cache.stale("pk_test_a") is None
