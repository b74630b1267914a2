"""A consumer group's side of a stream, written once for every reader (the actors on the command partitions,
streams/reader.py on the events stream): make the group, read new entries, claim what a dead or earlier consumer
left pending, read again what this one left unacknowledged, acknowledge, and tell a lost group or an unblocked read
from other errors."""

from __future__ import annotations

import asyncio
from typing import NamedTuple

from redis.exceptions import ResponseError

from streams.connection import CLUSTER_POLL_S, Client, is_cluster, stream_entries


class Entry(NamedTuple):
    stream: str
    entry_id: bytes
    fields: dict[bytes, bytes]
    deliveries: int = 1  # how often Redis has handed this entry out, this time included


def lost_group(exc: ResponseError) -> bool:
    """Redis lost the stream and its group (a restart without persistence): make the group again."""
    return str(exc).startswith("NOGROUP")


def unblocked(exc: ResponseError) -> bool:
    """A blocking read's node became a replica (a Cluster failover): read again."""
    return str(exc).startswith("UNBLOCKED")


class Consumer:
    """One consumer (`name`) of one group on any number of streams."""

    def __init__(self, redis: Client, group: str, name: str) -> None:
        self.redis, self.group, self.name = redis, group, name

    async def ensure(self, stream: str, from_id: str = "0") -> None:
        """The group on the stream (made with the stream when missing), reading from `from_id` when new."""
        try:
            await self.redis.xgroup_create(stream, self.group, id=from_id, mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read(self, reader: Client, streams: list[str], count: int, block_ms: int) -> list[Entry]:
        """New entries for this consumer from any of the streams, waiting up to block_ms for the first. `reader` is
        a client for blocking reads (streams.connection.blocking_reader)."""
        if not is_cluster(reader) or len(streams) == 1:  # a single stream is in one slot: one blocking read
            found = await reader.xreadgroup(self.group, self.name, dict.fromkeys(streams, ">"), count=count,
                                            block=block_ms or None)
            return [Entry(*entry) for entry in stream_entries(found)]
        # Each partition is a slot of its own: one non-blocking read per stream, sent together to each node.
        waited, pause = 0.0, CLUSTER_POLL_S[0]
        while True:
            pipe = reader.pipeline(transaction=False)
            for stream in streams:
                pipe.xreadgroup(self.group, self.name, {stream: ">"}, count=count)
            entries = []
            for found in await pipe.execute(raise_on_error=True):
                entries += [Entry(*entry) for entry in stream_entries(found)]
            if entries or waited * 1000 >= block_ms:
                return entries
            pause = min(pause, block_ms / 1000 - waited)
            await asyncio.sleep(pause)
            waited += pause
            pause = min(pause * 2, CLUSTER_POLL_S[1])

    async def claim(self, stream: str, count: int, min_idle_ms: int = 0, *, deliveries: bool = False) -> list[Entry]:
        """Entries pending for at least min_idle_ms, whoever read them, now this consumer's; with `deliveries`, each
        with how often it has been handed out (one more round trip)."""
        claimed = await self.redis.xautoclaim(stream, self.group, self.name, min_idle_time=min_idle_ms, count=count)
        entries = [(e, f) for e, f in claimed[1] if f]  # Redis 6.2 lists entries deleted while pending, empty
        if not entries or not deliveries:
            return [Entry(stream, e, f) for e, f in entries]
        pending = await self.redis.xpending_range(stream, self.group, min=entries[0][0], max=entries[-1][0],
                                                  count=count, consumername=self.name)
        handed = {p["message_id"]: p["times_delivered"] for p in pending}
        return [Entry(stream, e, f, handed.get(e, 1)) for e, f in entries]

    async def unacknowledged(self, stream: str, count: int) -> list[Entry]:
        """What this consumer read and has not acknowledged, oldest first (an entry deleted meanwhile left out)."""
        found = await self.redis.xreadgroup(self.group, self.name, {stream: "0"}, count=count)
        return [Entry(*entry) for entry in stream_entries(found) if entry[2]]

    def ack_call(self, stream: str, entry_ids: list[bytes]) -> tuple:
        """The acknowledgement as a call for a pipeline (streams.pipeliner), sent with others."""
        return ("XACK", stream, self.group, *entry_ids)

    async def ack(self, stream: str, entry_ids: list[bytes]) -> None:
        await self.redis.xack(stream, self.group, *entry_ids)
