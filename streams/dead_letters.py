"""The dead-letter stream for the people on call: list, show, retry, drop.

A retry appends the command exactly as it was read back onto the partition it came from, under its
original command id: the actor's dedupe table answers it if it was ever applied, so a retry can never
apply a command twice. The new entry names the entry it was first read from (`first_entry`), whose time
the intake's skew check uses, so a command set aside hours ago is not refused for its age.
"""

from __future__ import annotations

from typing import Any

import msgspec

from streams.connection import Client
from streams.names import Keys

LISTED = ("stream", "entry_id", "command_id", "deliveries", "error", "at")


class NotFound(Exception):
    pass


class Letter(msgspec.Struct, kw_only=True):
    id: str
    stream: str
    entry_id: str
    command_id: str
    deliveries: int
    error: str
    at: str
    trace: str = ""
    command: str = ""  # the entry's `m`, as text


def _letter(entry_id: bytes, fields: dict[bytes, bytes], full: bool) -> Letter:
    text = {k.decode(): v.decode(errors="replace") for k, v in fields.items()}
    return Letter(id=entry_id.decode(), stream=text.get("stream", ""), entry_id=text.get("entry_id", ""),
                  command_id=text.get("command_id", ""), deliveries=int(text.get("deliveries", "0")),
                  error=text.get("error", ""), at=text.get("at", ""),
                  trace=text.get("trace", "") if full else "", command=text.get("m", "") if full else "")


def set_aside_call(keys: Keys, stream: str, entry_id: bytes, command_id: str, deliveries: int, error: str, trace: str,
                   at: str, message: bytes) -> tuple:
    """A command set aside, with why and how often it was delivered, as a call for a pipeline."""
    return ("XADD", keys.dead_letters, "*", "stream", stream, "entry_id", entry_id, "command_id", command_id,
            "deliveries", deliveries, "error", error, "trace", trace, "at", at, "m", message)


async def listed(redis: Client, keys: Keys, count: int = 100) -> list[Letter]:
    return [_letter(i, f, full=False) for i, f in await redis.xrange(keys.dead_letters, count=count)]


async def _entry(redis: Client, keys: Keys, letter_id: str) -> tuple[bytes, dict[bytes, bytes]]:
    found = await redis.xrange(keys.dead_letters, letter_id, letter_id)
    if not found:
        raise NotFound(letter_id)
    return found[0]


async def show(redis: Client, keys: Keys, letter_id: str) -> Letter:
    return _letter(*await _entry(redis, keys, letter_id), full=True)


async def retry(redis: Client, keys: Keys, letter_id: str) -> str:
    """Back onto its partition; returns the new entry's id."""
    _id, fields = await _entry(redis, keys, letter_id)
    appended: Any = await redis.xadd(fields[b"stream"].decode(), {"m": fields[b"m"], "first_entry": fields[b"entry_id"]})
    await redis.xdel(keys.dead_letters, letter_id)
    return appended.decode()


async def drop(redis: Client, keys: Keys, letter_id: str) -> None:
    await _entry(redis, keys, letter_id)
    await redis.xdel(keys.dead_letters, letter_id)
