"""Upgrading a database that already holds orders and unpublished events keeps both."""

from __future__ import annotations

import secrets

import asyncpg
import msgspec
import pytest

from actors.messages import Reply
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
    await conn.execute("INSERT INTO events (event_id, order_id, seq, type, merchant_id, livemode, data, created_at)"
                       " VALUES ('evt_pending', 'ord_a', 2, 'order.canceled', 'mer_1', false, '{}', now())")

    assert await db.migrate(url) == [p.name for p in sorted(db.MIGRATIONS.glob("*.sql")) if p.name >= BEFORE_BATCH_OUTBOX]

    numbers = {(r["merchant_id"], r["livemode"]): r["last"] for r in await conn.fetch("SELECT * FROM order_numbers")}
    assert numbers == {("mer_1", False): 1042, ("mer_1", True): 1001, ("mer_2", False): 1007}
    row = await conn.fetchrow("SELECT batch_id, event_ids FROM outbox")
    assert (row["batch_id"], row["event_ids"]) == ("evt_pending", ["evt_pending"])
    # The event keeps the bytes it was held with: the outbox sweep publishes them from there.
    assert await conn.fetchval("SELECT public FROM events WHERE event_id = 'evt_pending'") == b'{"id": "evt_pending"}'



async def test_upgrade_has_answers_that_hold_a_view_name_its_version_instead(old_database):
    url, conn = old_database
    held = b'{"command_id":"cmd_held","ok":true,"state":{"order_id":"ord_a","status":"PAID","version":3},"error":null}'
    refused = b'{"command_id":"cmd_refused","ok":false,"state":null,"error":{"status":409,"code":"x","message":"y"}}'
    for command_id, reply in [("cmd_held", held), ("cmd_refused", refused)]:
        await conn.execute("INSERT INTO commands (command_id, order_id, request_hash, reply) VALUES ($1, 'ord_a', '', $2)",
                           command_id, reply)
    await db.migrate(url)
    answers = {r["command_id"]: (bytes(r["reply"]), r["version"])
               for r in await conn.fetch("SELECT command_id, reply, version FROM commands")}
    # As the commit records an answer holding the view today (actors/outcomes.py, Outcome.recorded).
    assert answers == {"cmd_held": (msgspec.json.encode(Reply(command_id="cmd_held", ok=True)), 3),
                       "cmd_refused": (refused, None)}
