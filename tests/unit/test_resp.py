"""The lean RESP connection against the real Redis server: framing, replies split across reads, errors."""

from __future__ import annotations

import secrets

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from streams.resp import RespConnection, pack, stream_entries
from tests.conftest import REDIS_URL


@pytest.fixture
async def conn():
    client = aioredis.Redis.from_url(REDIS_URL)
    c = RespConnection(client)
    yield c
    await c.close()
    await client.aclose()


@pytest.fixture
def key():
    return f"resp{secrets.token_hex(4)}:"


def test_pack_frames_each_argument_by_length():
    assert pack([("SET", "k", b"a\r\nb"), ("INCRBY", "n", -7)]) == (
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n*3\r\n$6\r\nINCRBY\r\n$1\r\nn\r\n$2\r\n-7\r\n")


async def test_values_survive_the_round_trip_byte_for_byte(conn, key):
    value = "café ✓\r\n".encode() + bytes(range(256))
    assert await conn.call("SET", key + "v", value) == b"OK"
    assert await conn.call("GET", key + "v") == value
    assert await conn.call("GET", key + "missing") is None
    await conn.call("DEL", key + "v")


async def test_many_replies_and_large_ones_arrive_whole(conn, key):
    big = secrets.token_bytes(3 << 20)  # larger than one read
    await conn.send([("SET", key + "big", big), ("GET", key + "big")] + [("INCR", key + "n")] * 500 + [("DEL", key + "big", key + "n")])
    replies = []
    while len(replies) < 503:
        replies += await conn.replies()
    assert replies[:2] == [b"OK", big]
    assert replies[2:502] == list(range(1, 501))
    assert replies[502] == 2


async def test_an_error_reply_is_raised_and_the_connection_goes_on(conn, key):
    await conn.call("SET", key + "s", "text")
    with pytest.raises(ResponseError, match="not an integer"):
        await conn.call("INCR", key + "s")
    assert await conn.call("DEL", key + "s") == 1


async def test_stream_entries_of_a_group_read(conn, key):
    stream = key + "stream"
    first = await conn.call("XADD", stream, "*", "m", b"one")
    await conn.call("XADD", stream, "*", "m", b"two", "x", "3")
    await conn.call("XGROUP", "CREATE", stream, "g", "0")
    found = await conn.call("XREADGROUP", "GROUP", "g", "c", "COUNT", 10, "STREAMS", stream, ">")
    assert [(s, f) for s, _, f in stream_entries(found)] == [(stream, {b"m": b"one"}), (stream, {b"m": b"two", b"x": b"3"})]
    assert stream_entries(found)[0][1] == first
    assert stream_entries(await conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", stream, ">")) == []
    await conn.call("DEL", stream)


async def test_a_closed_connection_says_so(conn):
    await conn.call("PING")
    killer = aioredis.Redis.from_url(REDIS_URL)
    try:
        await killer.client_kill_filter(_id=await conn.call("CLIENT", "ID"))
    finally:
        await killer.aclose()
    with pytest.raises((RedisConnectionError, ConnectionError, OSError)):
        await conn.call("PING")
    assert await conn.call("PING") in (b"PONG", "PONG")  # the next command opens a new connection
