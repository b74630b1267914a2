"""Upgrading a database that already holds orders and unpublished events keeps both."""

from __future__ import annotations

import secrets

import asyncpg
import pytest

from common import db
from tests.conftest import ADMIN_URL

BEFORE_BATCH_OUTBOX = "008_batch_outbox_and_order_numbers.sql"


@pytest.fixture
async def old_database():
    """A database migrated up to, not including, the batch outbox and the order number counters."""
    name = f"svc_test_migrate_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(ADMIN_URL)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    conn = await asyncpg.connect(url)
    await conn.execute("CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
    for path in sorted(db.MIGRATIONS.glob("*.sql")):
        if path.name >= BEFORE_BATCH_OUTBOX:
            break
        await conn.execute(path.read_text())
        await conn.execute("INSERT INTO schema_migrations (name) VALUES ($1)", path.name)
    try:
        yield url, conn
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_upgrade_seeds_order_numbers_and_keeps_pending_events(old_database):
    url, conn = old_database
    for order_id, merchant_id, livemode, number in [("ord_a", "mer_1", False, 1001), ("ord_b", "mer_1", False, 1042),
                                                    ("ord_c", "mer_1", True, 1001), ("ord_d", "mer_2", False, 1007)]:
        await conn.execute(
            "INSERT INTO orders (order_id, merchant_id, livemode, order_number, status, state, version, created_at,"
            " updated_at) VALUES ($1, $2, $3, $4, 'PENDING', '{}', 1, now(), now())", order_id, merchant_id, livemode, number)
    await conn.execute("INSERT INTO outbox (event_id, payload) VALUES ('evt_pending', '{\"id\": \"evt_pending\"}')")

    assert await db.migrate(url) == [p.name for p in sorted(db.MIGRATIONS.glob("*.sql")) if p.name >= BEFORE_BATCH_OUTBOX]

    numbers = {(r["merchant_id"], r["livemode"]): r["last"] for r in await conn.fetch("SELECT * FROM order_numbers")}
    assert numbers == {("mer_1", False): 1042, ("mer_1", True): 1001, ("mer_2", False): 1007}
    row = await conn.fetchrow("SELECT batch_id, payloads FROM outbox")
    assert (row["batch_id"], row["payloads"]) == ("evt_pending", [b'{"id": "evt_pending"}'])


async def _lz4_available(conn: asyncpg.Connection) -> bool:
    try:
        await conn.execute("CREATE TEMP TABLE lz4_probe (v text COMPRESSION lz4)")
        return True
    except asyncpg.FeatureNotSupportedError:
        return False


async def test_outbox_payloads_are_compressed_with_lz4_where_the_server_has_it(old_database):
    url, conn = old_database
    await db.migrate(url)
    method = await conn.fetchval(
        "SELECT attcompression FROM pg_attribute WHERE attrelid = 'outbox'::regclass AND attname = 'payloads'")
    assert method == (b"l" if await _lz4_available(conn) else b"\0")  # "char": \0 is the default, pglz
    payloads = [secrets.token_hex(2000).encode() for _ in range(4)]  # well past the TOAST threshold
    await conn.execute("INSERT INTO outbox (batch_id, payloads) VALUES ('evt_big', $1)", payloads)
    assert await conn.fetchval("SELECT payloads FROM outbox WHERE batch_id = 'evt_big'") == payloads
