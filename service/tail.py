"""`service streams tail`: a stream's entries decoded, one JSON object a line (commands, replies, events, dead
letters), optionally of one order only, and followed as they arrive.

Entries are decoded as plain JSON, not as the actor's structs: an entry the code of today cannot read (an old
shape, a hand-altered command) is shown all the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec

from streams.connection import (
    Client,
    blocking_reader,
    close_reader,
    parse_entry_id,
    stream_entries,
)
from streams.names import Keys

FOLLOW_BLOCK_MS = 1000
PAGE = 500


def stream_name(keys: Keys, name: str) -> str:
    """`cmd:3` (or `3`), `events`, `dead`, `reply:CONSUMER`, or a key already carrying the prefix."""
    if name.startswith(keys.prefix):
        return name
    if name.isdigit():
        return keys.commands(int(name))
    if name.startswith("cmd:"):
        return keys.commands(int(name[4:].strip("{}")))
    if name.startswith("reply:"):
        return keys.replies(name[6:])
    named = {"events": keys.events, "dead": keys.dead_letters, "deadletters": keys.dead_letters}
    if name not in named:
        raise ValueError(f"no stream {name!r}: name cmd:P, events, dead or reply:CONSUMER")
    return named[name]


def _json(raw: bytes) -> Any:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return raw.decode(errors="replace")


def decoded(stream: str, entry_id: bytes, fields: dict[bytes, bytes]) -> dict[str, Any]:
    """One entry as plain data, with the order it concerns where it names one."""
    text = {k.decode(): v for k, v in fields.items()}
    entry: dict[str, Any] = {"stream": stream, "id": entry_id.decode()}
    if "m" in text and "error" in text:  # a dead letter: the command and why it was set aside
        entry.update(kind="dead_letter", **{k: v.decode(errors="replace") for k, v in text.items() if k != "m"},
                     command=_json(text["m"]))
        entry["order_id"] = _order_of(entry["command"])
    elif "m" in text:
        entry.update(kind="command", envelope=_json(text["m"]), order_id=_order_of(_json(text["m"])))
        if "first_entry" in text:
            entry["first_entry"] = text["first_entry"].decode()
    elif "e" in text:
        event = _json(text["e"])
        entry.update(kind="event", event=event, order_id=event.get("order_id") if isinstance(event, dict) else None)
        if "request_id" in text:
            entry["request_id"] = text["request_id"].decode(errors="replace")
    elif "r" in text:
        replies = _json(text["r"])
        entry.update(kind="replies", replies=replies,
                     order_ids=sorted({o for r in replies if (o := _order_of_reply(r))}) if isinstance(replies, list) else [])
    else:
        entry.update(kind="other", fields={k: v.decode(errors="replace") for k, v in text.items()})
    return entry


def _order_of(envelope: Any) -> str | None:
    command = envelope.get("command") if isinstance(envelope, dict) else None
    return command.get("order_id") if isinstance(command, dict) else None


def _order_of_reply(reply: Any) -> str | None:
    state = reply.get("state") if isinstance(reply, dict) else None
    return state.get("order_id") if isinstance(state, dict) else None


def concerns(entry: dict[str, Any], order_id: str) -> bool:
    return entry.get("order_id") == order_id or order_id in entry.get("order_ids", ())


async def tail(redis: Client, stream: str, start: str, order_id: str | None = None,
               follow: bool = False) -> AsyncIterator[dict[str, Any]]:
    """Entries from `start` (an id, inclusive, or `-`), then, following, each new one as it arrives."""
    last = None
    while True:  # in pages: a long stream is never held in memory whole
        page = await redis.xrange(stream, start if last is None else f"({last}", "+", count=PAGE)
        for entry_id, fields in page:
            last = entry_id.decode()
            entry = decoded(stream, entry_id, fields)
            if order_id is None or concerns(entry, order_id):
                yield entry
        if len(page) < PAGE:
            break
    if not follow:
        return
    reader = blocking_reader(redis)
    try:
        after = last or (start if start not in ("-", "0") else "0-0")
        if last is None and start not in ("-", "0"):  # nothing at or after `start` yet: read from just before it
            after = _before(start)
        while True:
            for _stream, entry_id, fields in stream_entries(await reader.xread({stream: after}, block=FOLLOW_BLOCK_MS)):
                after = entry_id.decode()
                entry = decoded(stream, entry_id, fields)
                if order_id is None or concerns(entry, order_id):
                    yield entry
    finally:
        await close_reader(redis, reader)


def _before(start: str) -> str:
    ms, seq = parse_entry_id(start)
    if seq > 0:
        return f"{ms}-{seq - 1}"
    return f"{ms - 1}-{2**64 - 1}" if ms > 0 else "0-0"
