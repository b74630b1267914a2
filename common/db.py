"""PostgreSQL pool and schema migrations (plain SQL files applied in name order, once)."""

from __future__ import annotations

from pathlib import Path

import asyncpg

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_LOCK = 7_204_511  # advisory lock id: concurrent starters apply migrations one at a time


# The actors look orders and commands up by key in tables that grow by thousands of rows a second: a
# plan cached while a table was small would scan it whole from then on. Every statement of theirs has a
# key to follow, so their sessions never choose a sequential scan, and the cached plans stay good.
ACTOR_SETTINGS = {"enable_seqscan": "off"}


async def connect(url: str, min_size: int = 2, max_size: int = 10,
                  server_settings: dict[str, str] | None = None) -> asyncpg.Pool:
    return await asyncpg.create_pool(url, min_size=min_size, max_size=max_size, server_settings=server_settings)


async def migrate(url: str) -> list[str]:
    """Apply every migration not yet applied; returns the names applied now."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", _LOCK)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations"
            " (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
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
    finally:
        await conn.close()


async def missing_migrations(conn: asyncpg.Connection) -> list[str]:
    """Migrations of this release the database has not applied (the process runs against an older schema)."""
    try:
        done = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
    except asyncpg.UndefinedTableError:  # a database never migrated
        done = set()
    return [path.name for path in sorted(MIGRATIONS.glob("*.sql")) if path.name not in done]
