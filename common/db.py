"""PostgreSQL pool and schema migrations (plain SQL files applied in name order, once)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg

from common import backoff, db_roles, faults, metrics

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_LOCK = 7_204_511  # advisory lock id: concurrent starters apply migrations one at a time


# The actors look orders and commands up by key in tables that grow by thousands of rows a second: a
# plan cached while a table was small would scan it whole from then on. Every statement of theirs has a
# key to follow, so their sessions never choose a sequential scan, and the cached plans stay good.
ACTOR_SETTINGS = {"enable_seqscan": "off"}


# Per host, as libpq's connect_timeout: a host whose machine is frozen or cut off accepts the TCP connection and
# never answers. asyncpg spends its one timeout on the first such host and never asks the next. While the others
# all say they are not the primary (a failover under way), each attempt waits this long for the silent one.
CONNECT_TIMEOUT_S = 2.0


def hosts(url: str) -> list[str]:
    """The URL once per host it names (libpq's `postgresql://user@h1:p1,h2:p2/db?...`); a URL of one host, or of
    none (a UNIX socket in the query), as it is."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, tail = rest.partition("/")
    user, at, names = netloc.rpartition("@")
    if not sep or "," not in names:
        return [url]
    return [f"{scheme}://{user}{at}{name}{slash}{tail}" for name in names.split(",")]


async def connect_one(url: str, **kwargs) -> asyncpg.Connection:
    """A connection to the first host of the URL to answer that its target_session_attrs accepts (the primary, with
    read-write), asking all of them at once: after a failover, no frozen former primary holds up finding the new
    one. Any other connection that was made meanwhile is closed."""
    each = hosts(url)
    if len(each) == 1:
        return await asyncpg.connect(url, **kwargs)
    tasks = [asyncio.create_task(asyncpg.connect(one, timeout=CONNECT_TIMEOUT_S, **kwargs)) for one in each]
    pending, chosen, error = set(tasks), None, None
    try:
        while pending and chosen is None:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.exception() is None:
                    chosen = chosen or task.result()
                else:
                    error = error or task.exception()
    finally:
        for task in pending:
            task.cancel()
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is None and task.result() is not chosen:
                task.result().terminate()
    if chosen is None:
        raise error
    return chosen


async def connect(url: str, min_size: int = 2, max_size: int = 10,
                  server_settings: dict[str, str] | None = None,
                  command_timeout: float | None = None) -> asyncpg.Pool:
    """A pool whose connections go to the primary among the URL's hosts. With `command_timeout`, a statement that
    gets no answer in that many seconds raises TimeoutError, and its connection is dropped: a primary that stopped
    answering without closing its connections holds no process up for longer."""
    return await asyncpg.create_pool(url, min_size=min_size, max_size=max_size, server_settings=server_settings,
                                     command_timeout=command_timeout, connect=connect_one)


async def stand_by_for_lock(conn: asyncpg.Connection, lock_id: int, stop: asyncio.Event,
                            every_s: float = 1.0) -> bool:
    """Take a session advisory lock on `conn`, standing by while another process holds it: one process of a kind
    works, a second waits to take over. False when `stop` came first."""
    while not await conn.fetchval("SELECT pg_try_advisory_lock($1)", lock_id):
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)
        if stop.is_set():
            return False
    return True


async def hold_lock(pool: asyncpg.Pool, lock_id: int, stop: asyncio.Event, what: str,
                    work: Callable[[], Awaitable[None]], *, every_s: float = 1.0,
                    ping_timeout_s: float = 2.0) -> None:
    """Run `work` while this process holds the session advisory lock `lock_id`, until `stop`.

    The lock lives as long as its connection: when that connection dies (a failover, pg_terminate_backend, a
    network cut), another process may take the lock at once, so `work` is cancelled the moment the connection is
    found closed (asyncpg reports it as it happens) or silent (a ping every `every_s` gets no answer), and the
    process stands by for the lock again. PostgreSQL away, at start or later, is waited out with backoff."""
    failures = 0
    while not stop.is_set():
        try:
            async with pool.acquire() as conn:
                if not await stand_by_for_lock(conn, lock_id, stop, every_s):
                    return
                if failures:
                    log.warning("%s: PostgreSQL reachable again", what)
                failures = 0
                await _work_while_held(conn, stop, what, work, every_s, ping_timeout_s)
        except faults.UNAVAILABLE as exc:
            failures += 1
            if failures == 1:
                log.warning("%s: PostgreSQL unreachable while standing by for the lock (%r); retrying with backoff",
                            what, exc)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), backoff.exponential(failures, 0.5, 5.0))


async def _work_while_held(conn: asyncpg.Connection, stop: asyncio.Event, what: str,
                           work: Callable[[], Awaitable[None]], every_s: float, ping_timeout_s: float) -> None:
    closed = asyncio.Event()

    def on_close(_conn: object) -> None:
        closed.set()

    conn.add_termination_listener(on_close)
    working = asyncio.create_task(work())
    metrics.LOCK_HELD.set(1)
    try:
        while not working.done() and not stop.is_set() and not closed.is_set():
            waits = [asyncio.ensure_future(e.wait()) for e in (stop, closed)]
            await asyncio.wait([working, *waits], timeout=every_s, return_when=asyncio.FIRST_COMPLETED)
            for waiting in waits:
                waiting.cancel()
            if working.done() or stop.is_set() or closed.is_set():
                break
            try:
                await conn.fetchval("SELECT 1", timeout=ping_timeout_s)
            except (*faults.UNAVAILABLE, asyncpg.PostgresError) as exc:
                log.warning("%s: the lock's connection does not answer (%r)", what, exc)
                break
        if stop.is_set() or working.done():
            await working  # the work ends by itself at the stop; its failure is the process's
            return
    finally:
        metrics.LOCK_HELD.set(0)
        with contextlib.suppress(asyncpg.InterfaceError):  # a closed connection is already detached from the pool
            conn.remove_termination_listener(on_close)
        if not working.done():
            working.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await working
    log.error("%s: the lock's connection is gone; stopped acting and standing by for the lock again", what)
    with contextlib.suppress(asyncpg.InterfaceError):
        conn.terminate()  # a silent one too: whatever it held server-side goes with it


class MigrationRefused(Exception):
    """A migration the connecting role may not apply (the runtime role, which owns nothing)."""


async def migrate(url: str, runtime_url: str | None = None) -> list[str]:
    """Apply every migration not yet applied, as the role of `url` (the owner); returns the names applied now.
    With `runtime_url`, the role it connects as (when another) is granted what the processes need, and no more
    on the audit log (common/db_roles.py)."""
    conn = await connect_one(url)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", _LOCK)
        try:
            applied = await _apply(conn)
        except asyncpg.InsufficientPrivilegeError as exc:
            raise MigrationRefused(f"{exc}: migrations run as the schema's owner, set DATABASE_OWNER_URL"
                                   " (docs/operations.md, Database roles)") from exc
        if runtime_url is not None:
            runtime = await db_roles.role_of(runtime_url)
            if runtime != await conn.fetchval("SELECT current_user"):
                await db_roles.grant_runtime(conn, runtime)
        return applied
    finally:
        await conn.close()


async def _apply(conn: asyncpg.Connection) -> list[str]:
    # Looked up first: the runtime role, which may create no table, can still find the schema current.
    if await conn.fetchval("SELECT to_regclass('schema_migrations')") is None:
        await conn.execute(
            "CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
    done = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
    applied = []
    for path in sorted(MIGRATIONS.glob("*.sql")):
        if path.name in done:
            continue
        async with conn.transaction():
            await conn.execute(path.read_text())
            await conn.execute("INSERT INTO schema_migrations (name) VALUES ($1)", path.name)
        applied.append(path.name)
    return applied


async def missing_migrations(conn: asyncpg.Connection) -> list[str]:
    """Migrations of this release the database has not applied (the process runs against an older schema)."""
    try:
        done = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
    except asyncpg.UndefinedTableError:  # a database never migrated
        done = set()
    return [path.name for path in sorted(MIGRATIONS.glob("*.sql")) if path.name not in done]
