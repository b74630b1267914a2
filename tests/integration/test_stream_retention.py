"""Streams keep what a reader still needs and what the retention window holds, and nothing more."""

from __future__ import annotations

import logging
import secrets

import pytest
import redis.asyncio as aioredis

from streams import retention
from tests.conftest import REDIS_URL

HOUR_MS = 3_600_000
NOW_MS = 1_800_000_000_000


@pytest.fixture
async def stream():
    redis = aioredis.Redis.from_url(REDIS_URL)
    name = f"retention{secrets.token_hex(4)}:s"
    for hours_ago in (30, 26, 25, 23, 1):  # one entry each, named by its time
        await redis.xadd(name, {"m": b"x"}, id=f"{NOW_MS - hours_ago * HOUR_MS}-0")
    yield redis, name
    await redis.delete(name)
    await redis.aclose()


async def _ids(redis, name) -> list[int]:
    return [int(entry_id.split(b"-")[0]) for entry_id, _ in await redis.xrange(name)]


async def _read_all(redis, name, group, ack: bool) -> None:
    await redis.xgroup_create(name, group, id="0")
    found = await redis.xreadgroup(group, "c", {name: ">"})
    if ack:
        await redis.xack(name, group, *[entry_id for entry_id, _ in found[0][1]])


async def test_acknowledged_entries_older_than_the_window_go(stream):
    redis, name = stream
    await _read_all(redis, name, "actors", ack=True)
    await _read_all(redis, name, "audit", ack=True)
    assert await retention.trim(redis, name, 24 * 3600, NOW_MS) == 3
    assert await _ids(redis, name) == [NOW_MS - 23 * HOUR_MS, NOW_MS - HOUR_MS]


async def test_a_group_that_lags_past_the_window_holds_the_stream_back_and_is_logged(stream, caplog):
    redis, name = stream
    await _read_all(redis, name, "actors", ack=True)
    await redis.xgroup_create(name, "slow", id="0")
    await redis.xreadgroup("slow", "c", {name: ">"}, count=2)
    await redis.xack(name, "slow", f"{NOW_MS - 30 * HOUR_MS}-0")  # it still holds the entry of 26 h ago
    with caplog.at_level(logging.WARNING):
        assert await retention.trim(redis, name, 24 * 3600, NOW_MS) == 1
    assert (await _ids(redis, name))[0] == NOW_MS - 26 * HOUR_MS
    assert "group slow lags behind the 86400 s retention window" in caplog.text


async def test_a_group_that_has_not_read_old_entries_keeps_them(stream, caplog):
    redis, name = stream
    await _read_all(redis, name, "actors", ack=True)
    await redis.xgroup_create(name, "late", id="0")  # has read nothing yet
    with caplog.at_level(logging.WARNING):
        assert await retention.trim(redis, name, 24 * 3600, NOW_MS) == 0
    assert len(await _ids(redis, name)) == 5 and "group late lags" in caplog.text


async def test_a_group_that_has_read_everything_holds_nothing_back(stream, caplog):
    redis, name = stream
    await _read_all(redis, name, "actors", ack=True)
    with caplog.at_level(logging.WARNING):
        await retention.trim(redis, name, 3600 * 2, NOW_MS + 10 * HOUR_MS)  # the newest entry is 11 h old
    assert await _ids(redis, name) == [] and "lags" not in caplog.text


async def test_a_missing_stream_trims_nothing():
    redis = aioredis.Redis.from_url(REDIS_URL)
    try:
        assert await retention.trim(redis, f"retention{secrets.token_hex(4)}:none", 60) == 0
    finally:
        await redis.aclose()
