"""A dependency's fault is answered 503 (naming the command sent, when one was), never 500: what asyncpg raises
while PostgreSQL fails over included. And the API keys a web process knows serve on while PostgreSQL is away."""

from __future__ import annotations

import logging

import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from redis.exceptions import TimeoutError as RedisTimeoutError

from accounts.merchants import ApiKey
from actors.bus import CommandBus
from common import faults, metrics
from web.edge import key_cache
from web.edge.app_state import COMMAND_ID
from web.edge.errors import error_middleware
from web.edge.key_cache import KeyCache

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


# What the machine under PostgreSQL raises when it runs short (SQLSTATE classes 53 and 58): the same command passes
# once it is fixed, so it is retried as after a lost connection, never refused or set aside.
MACHINE_FAULTS = [
    asyncpg.DiskFullError("could not extend file \"base/16384/2619\": No space left on device"),
    asyncpg.OutOfMemoryError("out of memory"),
    asyncpg.TooManyConnectionsError("sorry, too many clients already"),
    asyncpg.PostgresSystemError("could not read block 0: Input/output error"),
]


@pytest.mark.parametrize("exc", MACHINE_FAULTS, ids=lambda e: type(e).__name__)
def test_the_machine_s_faults_are_a_dependency_away(exc):
    assert isinstance(exc, faults.UNAVAILABLE) and faults.dependency_of(exc) == "postgresql"


def _raised_inside(module: str, exc: Exception) -> Exception:
    """exc as raised by code of `module` (its traceback's innermost frame)."""
    code = compile("def fail(exc):\n    raise exc\n", f"<{module}>", "exec")
    scope = {"__name__": module}
    exec(code, scope)  # noqa: S102 - a frame whose module name is `module`
    try:
        scope["fail"](exc)
    except Exception as raised:  # noqa: BLE001
        return raised
    raise AssertionError("not raised")


def test_an_os_error_is_put_down_to_the_library_that_raised_it():
    assert faults.dependency_of(_raised_inside("redis.asyncio.connection", TimeoutError())) == "redis"
    assert faults.dependency_of(_raised_inside("asyncpg.connect_utils", ConnectionRefusedError())) == "postgresql"
    assert faults.dependency_of(RedisTimeoutError("Timeout reading from 127.0.0.1:6379")) == "redis"


def _fault_counts(dependency: str) -> tuple[float, float]:
    return (metrics.DEPENDENCY_FAULTS.labels(dependency)._value.get(),
            metrics.DEPENDENCY_FAULT_EPISODES.labels(dependency)._value.get())


def test_an_episode_of_faults_is_one_warning_naming_the_dependency_and_each_fault_is_counted(monkeypatch, caplog):
    """A drill filled PostgreSQL's disk for 10 s: one ERROR with its traceback per command. Now the first fault of an
    episode is a WARNING naming the dependency, the rest are counted, and a fault after a quiet gap starts another."""
    now = [1000.0]
    monkeypatch.setattr(faults, "_last_fault", {})
    monkeypatch.setattr(faults.time, "monotonic", lambda: now[0])
    log = logging.getLogger("tests.faults")
    before = _fault_counts("postgresql")
    with caplog.at_level(logging.DEBUG, logger="tests.faults"):
        for _ in range(50):
            faults.report(log, "worker w1: a lane", MACHINE_FAULTS[0], "retrying")
            now[0] += 0.2
        faults.report(log, "worker w1: a lane", RedisTimeoutError("Timeout reading"), "retrying")  # another one's
        now[0] += faults.EPISODE_GAP_S + 1
        faults.report(log, "worker w1: a lane", MACHINE_FAULTS[0], "retrying")
    faults_seen, episodes = (a - b for a, b in zip(_fault_counts("postgresql"), before))
    assert (faults_seen, episodes) == (51, 2)
    assert [(r.levelno, r.exc_info) for r in caplog.records] == [(logging.WARNING, None)] * 3
    first, redis_one, again = (r.getMessage() for r in caplog.records)
    assert "postgresql unavailable" in first and "No space left on device" in first
    assert "redis unavailable" in redis_one and "postgresql unavailable" in again


def test_a_redis_cut_under_the_reply_reader_is_one_warning(monkeypatch, caplog):
    """The web's reply reader logged `reading replies failed` at ERROR with a traceback for each read during a cut
    between the web and Redis; it is one WARNING naming Redis now."""
    monkeypatch.setattr(faults, "_last_fault", {})
    bus = CommandBus.__new__(CommandBus)  # no Redis: only how it reports a failed read
    bus.reply_stream = "svc:reply:web-x"
    with caplog.at_level(logging.DEBUG, logger="streams.producer"):
        for _ in range(20):
            bus.read_failed(RedisTimeoutError("Timeout reading from 127.0.0.1:6379"))
        bus.read_failed(KeyError("a bug"))
    assert [(r.levelno, r.exc_info is not None) for r in caplog.records] == [(logging.WARNING, False),
                                                                              (logging.ERROR, True)]
    assert "redis unavailable" in caplog.records[0].getMessage()
