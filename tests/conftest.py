"""Fixtures: a database and a Redis key prefix of this run's own, and the whole stack in-process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets

import aiohttp
import asyncpg
import pytest
import redis.asyncio as aioredis
from aiohttp.test_utils import TestServer
from cryptography.fernet import Fernet

from accounts import merchants
from actors.worker import Worker
from common import config, db, db_roles
from common.secrets import Vault
from streams.names import Keys
from testkit.signed import Signed
from tests.support import mailbox
from tests.support.clock import MovableClock
from web.app import init_app

ADMIN_URL = os.environ.get("TEST_DATABASE_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
RUN = secrets.token_hex(4)


async def _admin(admin_url: str, statement: str) -> None:
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


# The role every test's service connects as, as in production: it owns nothing, and may only add to and read the
# audit log (common/db_roles.py). Made once per server; the databases' owner is the admin URL's role.
RUNTIME_ROLE = "svc_runtime"
_OWNER_URLS: dict[str, str] = {}


def owner_url(url: str) -> str:
    """The owner's URL of a database `database` made (its runtime role's URL given)."""
    return _OWNER_URLS[url]


@contextlib.asynccontextmanager
async def owner_transaction(url: str):
    """A transaction of the schema's owner on the database `database` made (`url`: its runtime role's), rolled back
    at the end: for the tests that replay a migration on rows as they were before it."""
    conn = await asyncpg.connect(owner_url(url))
    try:
        transaction = conn.transaction()
        await transaction.start()
        try:
            yield conn
        finally:
            await transaction.rollback()
    finally:
        await conn.close()


async def empty_database(name: str, admin_url: str = ADMIN_URL) -> None:
    """A database of this name with nothing in it, and the runtime role on its server."""
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        await db_roles.ensure_login_role(admin, RUNTIME_ROLE)
    finally:
        await admin.close()


@contextlib.asynccontextmanager
async def database(name: str, admin_url: str = ADMIN_URL):
    """A migrated database of this name on admin_url's server, dropped afterwards; yields the runtime role's URL
    (admin_url's hosts and query, such as several hosts and target_session_attrs, with this database), the
    admin's role owning its schema (owner_url). A connection of its own for each, since the server may have
    failed over in between."""
    await empty_database(name, admin_url)
    base, _, query = admin_url.partition("?")
    owner = base.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")
    url = db_roles.as_role(owner, RUNTIME_ROLE)
    _OWNER_URLS[url] = owner
    try:
        for _ in range(50):  # on a replicated server the first host asked may be a replica that has not replayed it yet
            try:
                await db.migrate(owner, url)
                break
            except asyncpg.InvalidCatalogNameError:
                await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"database {name} never became reachable")
        yield url
    finally:
        _OWNER_URLS.pop(url, None)
        await _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
async def database_url():
    async with database(f"svc_test_{RUN}") as url:
        yield url


@pytest.fixture(scope="session")
async def settings(database_url, tmp_path_factory):
    prefix = f"t{RUN}:"
    yield config.load(
        {},
        database_url=database_url,
        redis_url=REDIS_URL,
        redis_prefix=prefix,
        partitions=4,
        lease_ttl_ms=1500,
        reply_timeout_s=5.0,
        master_key=Fernet.generate_key().decode(),
        data_dir=str(tmp_path_factory.mktemp("data")),
        port=0,
        # Every test's browser and client is 127.0.0.1: one page bucket for the whole run would throttle the suite.
        # tests/integration/test_rate_limits.py holds the limits to account on an app of its own.
        page_rate_limit_rps=10_000,
        page_rate_limit_burst=10_000,
        # Timer tests run the scheduler on a clock hours ahead of the worker's.
        command_max_skew_s=86_400,
    )
    r = aioredis.Redis.from_url(REDIS_URL)
    async for key in r.scan_iter(match=f"{prefix}*", count=1000):
        await r.delete(key)
    await r.aclose()


@pytest.fixture(scope="session")
async def pool(settings):
    # The session's web, worker, notifier and tests share it, and each of the worker's lanes holds a connection
    # while it serves: with ten, a full run once left the lease keeper and the web waiting for one forever.
    p = await db.connect(settings.database_url, min_size=1, max_size=20)
    yield p
    await p.close()


@pytest.fixture(scope="session")
async def redis(settings):
    r = aioredis.Redis.from_url(settings.redis_url)
    yield r
    await r.aclose()


@pytest.fixture(scope="session")
def keys(settings):
    return Keys(settings.redis_prefix, settings.partitions)


class Stack:
    def __init__(self, server: TestServer, settings: config.Settings, pool, http: aiohttp.ClientSession,
                 clock: MovableClock):
        self.server = server
        self.clock = clock  # the web's: the time its commands carry and its reads compare with
        self.settings = settings
        self.pool = pool
        self.http = http
        self.vault = Vault(settings.master_key.encode())

    @property
    def base_url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    async def merchant(self, name: str = "Acme", livemode: bool = False) -> Signed:
        pair = await merchants.create(self.pool, self.vault, name, livemode)
        return Signed(self.http, self.base_url, pair.public_key, pair.secret_key, pair.merchant_id)

    async def other_mode(self, client: Signed, livemode: bool) -> Signed:
        pair = await merchants.add_key(self.pool, self.vault, client.merchant_id, livemode)
        return Signed(self.http, self.base_url, pair.public_key, pair.secret_key, pair.merchant_id)


@contextlib.asynccontextmanager
async def running(settings, pool, redis, keys):
    """The web app and one actor worker over this settings' database and Redis prefix."""
    clock = MovableClock()
    server = TestServer(init_app(settings, clock=clock))
    await server.start_server()
    stop = asyncio.Event()
    worker = Worker(pool, redis, keys, f"test-worker-{secrets.token_hex(4)}", settings.lease_ttl_ms,
                    settings.batch_size, settings.actor_lanes, max_skew_s=settings.command_max_skew_s)
    task = asyncio.create_task(worker.run(stop))
    http = aiohttp.ClientSession()
    try:
        yield Stack(server, settings, pool, http, clock)
    finally:
        await http.close()
        stop.set()
        await task
        await server.close()


@pytest.fixture(scope="session")
async def stack(settings, pool, redis, keys):
    async with running(settings, pool, redis, keys) as running_stack:
        yield running_stack


@pytest.fixture(autouse=True)
def _stack_clock_back_to_real_time(request):
    """The stack lives for the whole session: a test moving its clock forward would leave every later test's
    commands timed ahead of the watchers, dispatchers and signatures that read the real clock."""
    yield
    if "stack" in request.fixturenames:
        request.getfixturevalue("stack").clock.reset()


@pytest.fixture
async def merchant(stack) -> Signed:
    return await stack.merchant()


@pytest.fixture
def smtp():
    """A real SMTP server in-process and its inbox (tests/support/mailbox.py)."""
    controller, inbox = mailbox.serving()
    yield controller, inbox
    controller.stop()
