"""The service's two database roles. The owner runs the migrations and owns every table; the runtime role, which
every process connects as, owns nothing: the owner grants it what the processes use and, on `audit_events`, only
INSERT and SELECT, so no process can change, delete or empty the audit log, nor disable its trigger or take the
table over (docs/operations.md, Database roles)."""

from __future__ import annotations

import asyncpg

# What the runtime role may do: read and write the tables the processes keep, use their sequences, and only add
# to and read the audit log. Granted again after every migration run, so a table a migration adds is covered.
_GRANTS = """
GRANT USAGE ON SCHEMA public TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role};
REVOKE ALL ON audit_events FROM {role};
GRANT SELECT, INSERT ON audit_events TO {role};
"""


def ident(name: str) -> str:
    """A role name quoted as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def as_role(url: str, role: str) -> str:
    """The URL with `role` as its user (no password: for servers that trust local connections, as the embedded
    one and the test servers do)."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, tail = rest.partition("/")
    hosts = netloc.rpartition("@")[2]
    return f"{scheme}{sep}{role}@{hosts}{slash}{tail}"


async def role_of(url: str) -> str:
    """The role a URL connects as."""
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchval("SELECT current_user")
    finally:
        await conn.close()


async def grant_runtime(conn: asyncpg.Connection, role: str) -> None:
    """On the owner's connection: the runtime role's privileges, and nothing more on the audit log."""
    await conn.execute(_GRANTS.format(role=ident(role)))


async def ensure_login_role(conn: asyncpg.Connection, role: str) -> None:
    """A role that may log in and owns nothing, made once per server (several test runs may race to make it)."""
    try:
        await conn.execute(f"CREATE ROLE {ident(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT")
    except (asyncpg.DuplicateObjectError, asyncpg.UniqueViolationError):
        pass
