"""What the people on call read off the streams: lag, pending entries, lease holders, dead letters.

Reads only; every figure comes from one Redis call per stream or key, so it is safe against a live
deployment.
"""

from __future__ import annotations

from typing import Any

import msgspec
from redis.exceptions import ResponseError

from streams.connection import Client
from streams.names import ACTORS_GROUP, Keys


class Group(msgspec.Struct, kw_only=True):
    name: str
    lag: int | None  # entries not yet read by the group (None: the server does not count them, Redis < 7)
    pending: int  # read, not yet acknowledged
    oldest_pending_age_s: float | None = None
    oldest_pending_deliveries: int | None = None


class Stream(msgspec.Struct, kw_only=True):
    name: str
    length: int
    first_id: str | None
    last_id: str | None
    groups: list[Group]


class Partition(msgspec.Struct, kw_only=True):
    partition: int
    stream: Stream
    lease_holder: str | None
    lease_renewed_s_ago: float | None


class Status(msgspec.Struct, kw_only=True):
    partitions: list[Partition]
    events: Stream
    reply_streams: dict[str, int]  # name -> length
    dead_letters: dict[str, int]  # stream the dead letter came from -> how many
    problems: list[str] = []


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def stream(redis: Client, name: str) -> Stream:
    try:
        info = await redis.xinfo_stream(name)
        groups = await redis.xinfo_groups(name)
    except ResponseError as exc:
        if "no such key" not in str(exc):
            raise
        return Stream(name=name, length=0, first_id=None, last_id=None, groups=[])
    found = []
    for g in groups:
        group = Group(name=_text(g["name"]), lag=g.get("lag"), pending=g["pending"])
        if group.pending:
            [oldest] = await redis.xpending_range(name, group.name, min="-", max="+", count=1) or [None]
            if oldest is not None:
                group.oldest_pending_age_s = oldest["time_since_delivered"] / 1000
                group.oldest_pending_deliveries = oldest["times_delivered"]
        found.append(group)
    first, last = info.get("first-entry"), info.get("last-entry")
    return Stream(name=name, length=info["length"], first_id=_text(first[0]) if first else None,
                  last_id=_text(last[0]) if last else None, groups=found)


async def partition(redis: Client, keys: Keys, p: int, lease_ttl_ms: int) -> Partition:
    holder = await redis.get(keys.lease(p))
    left_ms = await redis.pttl(keys.lease(p)) if holder else None
    return Partition(
        partition=p, stream=await stream(redis, keys.commands(p)),
        lease_holder=_text(holder) if holder else None,
        lease_renewed_s_ago=round((lease_ttl_ms - left_ms) / 1000, 3) if left_ms and left_ms > 0 else None)


async def dead_letters(redis: Client, keys: Keys) -> dict[str, int]:
    """How many dead letters came from each stream."""
    dead: dict[str, int] = {}
    for _id, fields in await redis.xrange(keys.dead_letters):
        origin = _text(fields.get(b"stream", b"?"))
        dead[origin] = dead.get(origin, 0) + 1
    return dead


async def status(redis: Client, keys: Keys, lease_ttl_ms: int, max_lag: int | None = None,
                 max_pending_age_s: float | None = None) -> Status:
    partitions = [await partition(redis, keys, p, lease_ttl_ms) for p in range(keys.partitions)]
    replies = {}
    async for name in redis.scan_iter(match=keys.replies("*"), count=1000, _type="stream"):
        replies[_text(name)] = await redis.xlen(name)
    found = Status(partitions=partitions, events=await stream(redis, keys.events), reply_streams=replies,
                   dead_letters=await dead_letters(redis, keys))
    found.problems = problems(found, max_lag, max_pending_age_s)
    return found


def problems(found: Status, max_lag: int | None, max_pending_age_s: float | None) -> list[str]:
    """The thresholds crossed, one line each."""
    crossed = []
    streams = [(f"partition {p.partition}", p.stream) for p in found.partitions] + [("events", found.events)]
    for label, s in streams:
        for g in s.groups:
            if max_lag is not None and g.lag is not None and g.lag > max_lag:
                crossed.append(f"{label}: group {g.name} lags {g.lag} entries (over {max_lag})")
            age = g.oldest_pending_age_s
            if max_pending_age_s is not None and age is not None and age > max_pending_age_s:
                crossed.append(f"{label}: group {g.name}'s oldest pending entry is {age:.1f} s old "
                               f"(over {max_pending_age_s:g} s)")
    for p in found.partitions:
        if p.lease_holder is None and any(g.name == ACTORS_GROUP and (g.lag or g.pending) for g in p.stream.groups):
            crossed.append(f"partition {p.partition}: commands waiting and no worker holds its lease")
    return crossed


def table(found: Status) -> str:
    """The status as text, one line per stream."""
    lines = [f"{'partition':>9} {'length':>8} {'lag':>6} {'pending':>7} {'oldest s':>8} {'tries':>5}  lease"]
    for p in found.partitions:
        g = next((g for g in p.stream.groups if g.name == ACTORS_GROUP), None)
        lease = f"{p.lease_holder} ({p.lease_renewed_s_ago:.1f} s ago)" if p.lease_holder else "-"
        lines.append(f"{p.partition:>9} {p.stream.length:>8} {_or_dash(g and g.lag):>6} {_or_dash(g and g.pending):>7}"
                     f" {_or_dash(g and g.oldest_pending_age_s):>8} {_or_dash(g and g.oldest_pending_deliveries):>5}"
                     f"  {lease}")
    lines.append(f"events: {found.events.length} entries")
    for g in found.events.groups:
        lines.append(f"  group {g.name}: lag {_or_dash(g.lag)}, pending {g.pending}")
    lines.append(f"reply streams: {len(found.reply_streams)}")
    lines.append("dead letters: " + (", ".join(f"{s} {n}" for s, n in sorted(found.dead_letters.items())) or "none"))
    lines += [f"PROBLEM {line}" for line in found.problems]
    return "\n".join(lines)


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)
