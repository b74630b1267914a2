"""DATABASE_URL naming several hosts: the connection goes to the one that accepts writes, asked of all at once, so a
host that accepts connections and never answers (its machine frozen or cut off) holds nothing up."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import pytest

from common import db
from tests.conftest import ADMIN_URL


@pytest.mark.parametrize(("url", "each"), [
    ("postgresql://u@h1:1,h2:2/db?target_session_attrs=read-write",
     ["postgresql://u@h1:1/db?target_session_attrs=read-write", "postgresql://u@h2:2/db?target_session_attrs=read-write"]),
    ("postgresql://u:p@h/db", ["postgresql://u:p@h/db"]),
    ("postgresql://postgres:@/postgres?host=/tmp/pg", ["postgresql://postgres:@/postgres?host=/tmp/pg"]),
    ("postgres://[::1]:5,[::2]:6/d", ["postgres://[::1]:5/d", "postgres://[::2]:6/d"]),
])
def test_hosts(url, each):
    assert db.hosts(url) == each


@pytest.fixture
async def silent_host():
    """A port that accepts connections and never says a word."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader, writer):
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    for writer in held:
        writer.close()


async def test_a_silent_host_named_first_holds_nothing_up(silent_host):
    server = ADMIN_URL.split("@", 1)[1].split("/", 1)[0]
    url = f"postgresql://postgres@127.0.0.1:{silent_host},{server}/postgres?target_session_attrs=read-write"
    with pytest.raises(TimeoutError):  # asyncpg alone spends its whole timeout on the first host
        await asyncpg.connect(url, timeout=1)
    started = time.monotonic()
    conn = await db.connect_one(url)
    try:
        assert await conn.fetchval("SELECT NOT pg_is_in_recovery()")
    finally:
        await conn.close()
    assert time.monotonic() - started < 1


async def test_a_statement_unanswered_in_time_fails_as_the_database_away():
    """With command_timeout, a statement gets an answer in time or a TimeoutError (a dependency away), and the pool
    goes on on a new connection."""
    pool = await db.connect(ADMIN_URL, min_size=1, max_size=1, command_timeout=0.5)
    try:
        async with pool.acquire() as conn:
            with pytest.raises(TimeoutError):
                await conn.execute("SELECT pg_sleep(5)")
        assert await pool.fetchval("SELECT 1") == 1
    finally:
        await pool.close()
