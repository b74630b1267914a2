"""What the order actor recorded, read back with the ids that tie it together: each event with its id and
sequence number, each command with its reply. An event's id is derived from the command that produced it and
its sequence number, so an event names its command without a column of its own."""

from __future__ import annotations

from datetime import datetime

import asyncpg
import msgspec

from actors import messages as m
from actors import schema
from actors.outcomes import event_id


class StoredEvent(msgspec.Struct, frozen=True):
    event_id: str
    seq: int
    event: m.Event  # upcast to the current schema


class RecordedCommand(msgspec.Struct, frozen=True):
    command_id: str
    kind: str | None  # None: not on record for this command
    at: datetime | None
    request_hash: str
    reply: bytes
    recorded_at: datetime  # when its batch committed
    version: int | None = None  # of the order whose view the reply answered without copying it


async def events(conn: asyncpg.Connection, order_id: str) -> list[StoredEvent]:
    rows = await conn.fetch("SELECT event_id, seq, data, schema FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    return [StoredEvent(r["event_id"], r["seq"], schema.event(r["data"], r["schema"])) for r in rows]


async def commands(conn: asyncpg.Connection, order_id: str) -> list[RecordedCommand]:
    rows = await conn.fetch("SELECT command_id, kind, at, request_hash, reply, created_at, version FROM commands"
                            " WHERE order_id = $1 ORDER BY created_at, command_id", order_id)
    return [RecordedCommand(r["command_id"], r["kind"], r["at"], r["request_hash"], bytes(r["reply"]),
                            r["created_at"], r["version"]) for r in rows]


def produced_by(command_id: str, stored: list[StoredEvent]) -> list[StoredEvent]:
    """The events this command appended."""
    return [e for e in stored if e.event_id == event_id(command_id, e.seq, e.event.at)]
