"""The events-stream reader on fakeredis and on the real Redis server: a batch acknowledged only once handled, a dead
reader's entries taken over, a lost group made again, a dependency away waited out and a fault let through."""

from __future__ import annotations

import asyncio
import logging

import pytest
from redis.exceptions import ResponseError

from streams import reader as reader_module
from streams.consumer import Entry
from streams.reader import Reader
from tests.unit.test_streams import keys, redis  # noqa: F401


class Handled:
    """A service's handling: what it was given, failing with the errors queued in `raising` first; `stop` is set
    once `wanted` entries were handled."""

    def __init__(self, wanted: int = 0, raising: list[BaseException] | None = None) -> None:
        self.entries: list[Entry] = []
        self.raising = list(raising or [])
        self.wanted, self.stop = wanted, asyncio.Event()

    async def __call__(self, entries: list[Entry]) -> int:
        if self.raising:
            raise self.raising.pop(0)
        self.entries += entries
        if self.wanted and len(self.entries) >= self.wanted:
            self.stop.set()
        return len(entries)

    def fields(self) -> list[bytes]:
        return [entry.fields[b"e"] for entry in self.entries]


def made(redis, keys, handle, name: str, reported: list | None = None) -> Reader:  # noqa: F811
    return Reader(redis, keys.events, "readers", handle, batch=10, reclaim_idle_ms=0, name=name, away=(OSError,),
                  report=(reported if reported is not None else []).append)


async def add(redis, keys, *payloads: bytes) -> None:  # noqa: F811
    for payload in payloads:
        await redis.xadd(keys.events, {"e": payload})


async def pending(redis, keys) -> int:  # noqa: F811
    return (await redis.xpending(keys.events, "readers"))["pending"]


async def test_a_batch_is_acknowledged_once_handled_and_not_when_handling_fails(redis, keys):  # noqa: F811
    handle = Handled(raising=[ConnectionRefusedError("PostgreSQL away")])
    reader = made(redis, keys, handle, "a")
    await reader.start()
    await add(redis, keys, b"1", b"2")
    with pytest.raises(ConnectionRefusedError):
        await reader.consume()
    assert await pending(redis, keys) == 2
    assert await reader.reclaim() == 2
    assert handle.fields() == [b"1", b"2"] and await pending(redis, keys) == 0


async def test_what_a_dead_reader_left_is_taken_over_by_another(redis, keys):  # noqa: F811
    dead = made(redis, keys, Handled(raising=[KeyError("died mid-batch")]), "dead")
    await dead.start()
    await add(redis, keys, b"1", b"2", b"3")
    with pytest.raises(KeyError):
        await dead.consume()
    handle = Handled()
    alive = made(redis, keys, handle, "alive")
    assert await alive.consume() == 0  # nothing new: the three were handed out already
    assert await alive.reclaim() == 3
    assert handle.fields() == [b"1", b"2", b"3"] and await pending(redis, keys) == 0


async def test_a_running_reader_takes_over_a_dead_readers_entries_first(redis, keys):  # noqa: F811
    dead = made(redis, keys, Handled(raising=[KeyError("died mid-batch")]), "dead")
    await dead.start()
    await add(redis, keys, b"left")
    with pytest.raises(KeyError):
        await dead.consume()
    handle = Handled(wanted=1)
    await asyncio.wait_for(made(redis, keys, handle, "alive").run(handle.stop), 5)
    assert handle.fields() == [b"left"] and await pending(redis, keys) == 0


async def test_a_group_redis_lost_is_made_again_and_the_new_stream_read_from_its_start(redis, keys, caplog):  # noqa: F811
    handle = Handled(wanted=2)
    reader = made(redis, keys, handle, "a")
    await reader.start("$")
    await redis.delete(keys.events)  # a restart without persistence: the stream and its group are gone
    await add(redis, keys, b"after-1", b"after-2")
    with caplog.at_level(logging.WARNING, logger="streams.reader"):
        await asyncio.wait_for(reader.run(handle.stop), 5)
    assert handle.fields() == [b"after-1", b"after-2"] and await pending(redis, keys) == 0
    assert [r.getMessage() for r in caplog.records] == [f"{keys.events}: consumer group readers lost; making it again"]


async def test_a_dependency_away_is_reported_and_waited_out(redis, keys, monkeypatch):  # noqa: F811
    monkeypatch.setattr(reader_module, "AWAY_PAUSE_S", 0.01)
    away = [ConnectionRefusedError("PostgreSQL away"), TimeoutError("still away")]
    handle, reported = Handled(wanted=1, raising=list(away)), []
    reader = made(redis, keys, handle, "a", reported)
    await reader.start()
    await add(redis, keys, b"1")
    await asyncio.wait_for(reader.run(handle.stop), 5)
    assert reported == away
    assert handle.fields() == [b"1"] and await pending(redis, keys) == 0


@pytest.mark.parametrize("fault", [KeyError("a bug"), ResponseError("WRONGTYPE not a stream")])
async def test_a_fault_that_is_no_dependency_away_ends_the_run(redis, keys, fault):  # noqa: F811
    handle, reported = Handled(raising=[fault]), []
    reader = made(redis, keys, handle, "a", reported)
    await reader.start()
    await add(redis, keys, b"1")
    with pytest.raises(type(fault)):
        await asyncio.wait_for(reader.run(asyncio.Event()), 5)
    assert reported == [] and await pending(redis, keys) == 1
