"""Redis calls through redis-py against the real server: byte-exact values, callers who give up mid-flight,
and stream reads on a single server."""

from __future__ import annotations

import asyncio
import random
import secrets

import pytest

from streams.connection import (
    blocking_reader,
    connect,
    is_cluster,
    stream_entries,
)
from streams.consumer import Consumer, Entry
from streams.pipeliner import Pipeliner
from tests.conftest import REDIS_URL


@pytest.fixture
async def client():
    c = connect(REDIS_URL)
    yield c
    await c.aclose()


@pytest.fixture
def key():
    return f"calls{secrets.token_hex(4)}:"


def test_the_url_scheme_chooses_single_server_or_cluster():
    assert not is_cluster(connect("redis://127.0.0.1:6379/0"))
    assert is_cluster(connect("redis+cluster://127.0.0.1:7001"))
    assert is_cluster(connect("rediss+cluster://127.0.0.1:7001"))


async def test_values_survive_the_round_trip_byte_for_byte(client, key):
    pipe = Pipeliner(client)
    try:
        value = "café ✓\r\n".encode() + bytes(range(256)) + secrets.token_bytes(3 << 20)
        assert await pipe.call("SET", key + "v", value) is True
        assert await pipe.call("GET", key + "v") == value
        assert await pipe.call("GET", key + "missing") is None
    finally:
        await pipe.call("DEL", key + "v")
        await pipe.stop()


async def test_a_caller_that_gives_up_mid_flight_never_hands_its_reply_to_the_next(client, key):
    """Thousands of calls, a third of them cancelled at random points while in flight: every call that
    completes gets exactly the answer to its own command."""
    pipe = Pipeliner(client)
    rng = random.Random(7)

    async def echo(n: int) -> tuple[int, bytes]:
        return n, await pipe.call("ECHO", f"{key}{n}")

    try:
        for _round in range(10):
            calls = [asyncio.create_task(echo(n)) for n in range(300)]
            await asyncio.sleep(0)
            for task in rng.sample(calls, 100):
                asyncio.get_running_loop().call_later(rng.random() / 1000, task.cancel)
            done = await asyncio.gather(*calls, return_exceptions=True)
            answered = [d for d in done if not isinstance(d, BaseException)]
            assert answered, "every call was cancelled: the test proves nothing"
            assert all(reply == f"{key}{n}".encode() for n, reply in answered)
            assert await pipe.call("ECHO", "after") == b"after"
    finally:
        await pipe.stop()


async def test_a_cancelled_blocking_read_leaves_its_connection_clean(client, key):
    """A lane stopped in the middle of a blocking read: the same reader's next command gets its own reply."""
    reader = blocking_reader(client)
    try:
        waiting = asyncio.create_task(reader.xread({key + "quiet": "$"}, block=2000))
        await asyncio.sleep(0.1)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await client.xadd(key + "quiet", {"m": b"late"})  # the reply the cancelled read would have had
        assert await reader.echo("mine") == b"mine"
    finally:
        await reader.aclose()
        await client.delete(key + "quiet")


async def test_group_reads_over_several_streams(client, key):
    streams = [key + "a", key + "b"]
    for stream in streams:
        await client.xgroup_create(stream, "g", id="0", mkstream=True)
    first = await client.xadd(streams[0], {"m": b"one"})
    await client.xadd(streams[1], {"m": b"two", "x": "3"})
    consumer = Consumer(client, "g", "c")
    found = await consumer.read(client, streams, 10, 100)
    assert [(e.stream, e.fields) for e in found] == [(streams[0], {b"m": b"one"}),
                                                     (streams[1], {b"m": b"two", b"x": b"3"})]
    assert found[0].entry_id == first and all(isinstance(e, Entry) for e in found)
    assert await consumer.read(client, streams, 10, 50) == []  # waited, then nothing new
    await client.delete(*streams)


def test_stream_entries_read_both_protocol_shapes():
    resp2 = [[b"s", [(b"1-0", {b"m": b"x"}), (b"2-0", None)]]]
    resp3 = {b"s": [[(b"1-0", {b"m": b"x"}), (b"2-0", None)]][0]}
    expected = [("s", b"1-0", {b"m": b"x"}), ("s", b"2-0", {})]
    assert stream_entries(resp2) == stream_entries(resp3) == expected


