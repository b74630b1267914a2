"""Append-only for real: the service connects as a role that owns nothing (tests/conftest.py migrates each database
as its owner and runs the service as RUNTIME_ROLE, as `service dev` and a production deployment do). That role adds
to and reads the audit log and can do nothing else to it: change or delete a row, empty the table, disable or drop
its trigger, take the table over, or skip triggers. The owner, who may do all that, is kept out of the service's
processes; even the owner's UPDATE, DELETE and TRUNCATE still meet the trigger."""

from __future__ import annotations

import secrets

import asyncpg
import pytest

from common import db, db_roles
from tests.conftest import ADMIN_URL, RUNTIME_ROLE, _admin, empty_database, owner_url

REFUSED = [
    "UPDATE audit_events SET action = 'staff.removed'",
    "DELETE FROM audit_events",
    "TRUNCATE audit_events",
    "ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only",
    "ALTER TABLE audit_events DISABLE TRIGGER ALL",
    "DROP TRIGGER audit_events_append_only ON audit_events",
    f"ALTER TABLE audit_events OWNER TO {RUNTIME_ROLE}",
    "DROP TABLE audit_events",
    "SET session_replication_role = replica",
    "CREATE TABLE audit_copy (LIKE audit_events)",
]


@pytest.fixture
async def recorded(stack, merchant) -> str:
    """One audit row of the merchant's: a payment link made with its key."""
    status, _ = await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/payment-links",
                                    {"name": "Kept", "amount": "1.00"})
    assert status == 201
    return merchant.merchant_id


async def _rows(conn, merchant_id: str) -> list[tuple]:
    return [tuple(r) for r in await conn.fetch("SELECT event_id, action, details FROM audit_events"
                                               " WHERE merchant_id = $1 ORDER BY event_id", merchant_id)]


async def test_the_service_connects_as_a_role_that_owns_nothing(stack):
    conn = await asyncpg.connect(stack.settings.database_url)
    try:
        assert await conn.fetchval("SELECT current_user") == RUNTIME_ROLE
        assert not await conn.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        owned = await conn.fetch("SELECT relname FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles"
                                 " WHERE rolname = current_user)")
        assert owned == []
        privileges = await conn.fetch("SELECT privilege_type FROM information_schema.role_table_grants"
                                      " WHERE table_name = 'audit_events' AND grantee = current_user")
        assert sorted(r["privilege_type"] for r in privileges) == ["INSERT", "SELECT"]
    finally:
        await conn.close()


@pytest.mark.parametrize("statement", REFUSED)
async def test_the_runtime_role_cannot_change_the_audit_log(stack, recorded, statement):
    conn = await asyncpg.connect(stack.settings.database_url)
    try:
        before = await _rows(conn, recorded)
        assert before
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            async with conn.transaction():
                await conn.execute(statement)
        assert await _rows(conn, recorded) == before
    finally:
        await conn.close()


@pytest.mark.parametrize("statement", REFUSED[:3])
async def test_the_trigger_still_refuses_the_owner_a_change(stack, recorded, statement):
    conn = await asyncpg.connect(owner_url(stack.settings.database_url))
    try:
        before = await _rows(conn, recorded)
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="append-only"):
            async with conn.transaction():
                await conn.execute(statement)
        assert await _rows(conn, recorded) == before
    finally:
        await conn.close()


async def test_migrations_are_the_owners_and_grant_the_runtime_role_its_share():
    """On a database of nothing: the runtime role alone is refused (naming DATABASE_OWNER_URL), the owner applies
    every migration and grants the runtime role reads and writes, and only INSERT and SELECT on the audit log."""
    name = f"svc_roles_{secrets.token_hex(4)}"
    await empty_database(name)
    owner = ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    runtime = db_roles.as_role(owner, RUNTIME_ROLE)
    try:
        with pytest.raises(db.MigrationRefused, match="DATABASE_OWNER_URL"):
            await db.migrate(runtime)
        applied = await db.migrate(owner, runtime)
        assert applied == [path.name for path in sorted(db.MIGRATIONS.glob("*.sql"))]
        assert await db.migrate(runtime) == []  # current: the runtime role finds nothing to do
        conn = await asyncpg.connect(runtime)
        try:
            assert await conn.fetchval("SELECT has_table_privilege('orders', 'UPDATE')")
            assert await conn.fetchval("SELECT has_table_privilege('audit_events', 'INSERT')")
            assert not await conn.fetchval("SELECT has_table_privilege('audit_events', 'UPDATE')")
            assert not await conn.fetchval("SELECT has_table_privilege('audit_events', 'TRUNCATE')")
        finally:
            await conn.close()
    finally:
        await _admin(ADMIN_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
