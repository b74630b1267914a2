"""Trimming a stream to what someone may still need: entries a consumer group has not acknowledged, and
the retention window that on-call engineers replay recent traffic from.

An entry goes once every group reading the stream has acknowledged it and it is older than the window.
A group that lags behind the window holds the stream back to its first unacknowledged entry: nothing
it has still to read is ever trimmed, the stream grows meanwhile, and every trim logs the lag so that
someone looks at the stuck reader.
"""

from __future__ import annotations

import logging
import time

from redis.exceptions import ResponseError

from streams.connection import Client, parse_entry_id

log = logging.getLogger(__name__)


async def keep_from(redis: Client, stream: str, retention_s: float, now_ms: int | None = None) -> tuple[int, int]:
    """The oldest entry id the stream must keep."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    floor = (max(now_ms - int(retention_s * 1000), 0), 0)
    for group in await redis.xinfo_groups(stream):
        name = group["name"].decode() if isinstance(group["name"], bytes) else group["name"]
        # Acknowledged since XINFO answered: no pending entry left, and its last delivered one is the mark.
        oldest_pending = (await redis.xpending(stream, name))["min"] if group["pending"] else None
        if oldest_pending is not None:
            first = parse_entry_id(oldest_pending)
        else:
            ms, seq = parse_entry_id(group["last-delivered-id"])
            first = (ms, seq + 1)
            if first < floor and not await redis.xrange(stream, f"{ms}-{seq + 1}", f"{floor[0]}-{floor[1]}", count=1):
                continue  # nothing unread before the window's start: the group holds nothing back
        if first < floor:
            log.warning("stream %s: group %s lags behind the %g s retention window (first unacknowledged entry "
                        "%d-%d); the stream keeps everything from there until the group catches up",
                        stream, name, retention_s, *first)
            floor = first
    return floor


async def trim(redis: Client, stream: str, retention_s: float, now_ms: int | None = None) -> int:
    """Entries removed."""
    try:
        ms, seq = await keep_from(redis, stream, retention_s, now_ms)
    except ResponseError as exc:
        if "no such key" in str(exc):
            return 0
        raise
    return await redis.xtrim(stream, minid=f"{ms}-{seq}", approximate=False)
