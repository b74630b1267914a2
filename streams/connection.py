"""Redis clients from a URL, and the stream reads every process makes, on a single server or a Redis Cluster.

`redis://` and `rediss://` (or a UNIX socket URL) name one server; `redis+cluster://host:port` and
`rediss+cluster://host:port` name any node of a Redis Cluster, whose other nodes the client finds itself.
Every call goes through redis-py's public asyncio API.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

Client = aioredis.Redis | RedisCluster
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
# A cluster cannot read streams of several slots in one blocking call: its lanes poll instead, waiting
# between empty reads from the first pause, doubling up to the last.
CLUSTER_POLL_S = (0.002, 0.05)


def connect(url: str, max_connections: int | None = None) -> Client:
    scheme, sep, rest = url.partition("://")
    options: dict[str, Any] = {} if max_connections is None else {"max_connections": max_connections}
    if scheme in CLUSTER_SCHEMES:
        # A replica may take a few seconds to be promoted after its primary failed: keep retrying through it.
        retry = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=20)
        return RedisCluster.from_url(f"{CLUSTER_SCHEMES[scheme]}{sep}{rest}", retry=retry, **options)
    return aioredis.Redis.from_url(url, **options)


def is_cluster(redis: Client) -> bool:
    return isinstance(redis, RedisCluster)


def blocking_reader(redis: Client) -> Client:
    """A client for blocking reads: on one server a connection of its own, so a read that waits never holds up
    other commands; a cluster client takes a connection per call from the node's pool already."""
    return redis if is_cluster(redis) else redis.client()


async def close_reader(redis: Client, reader: Client) -> None:
    """Close what blocking_reader(redis) opened (a cluster's reader is the client itself, closed by its owner)."""
    if reader is not redis:
        await reader.aclose()


def parse_entry_id(raw: bytes | str) -> tuple[int, int]:
    """A stream entry id (`ms-seq`, or `ms` alone) as numbers, which order as Redis orders the entries."""
    ms, _, seq = (raw.decode() if isinstance(raw, bytes) else raw).partition("-")
    return int(ms), int(seq or 0)


def stream_entries(reply: Any) -> list[tuple[str, bytes, dict[bytes, bytes]]]:
    """(stream, entry id, fields) of a parsed XREAD or XREADGROUP reply, in order. RESP2 gives a list of
    [stream, entries] pairs, RESP3 a map; an entry deleted while pending has no fields."""
    entries = []
    for stream, found in reply.items() if isinstance(reply, dict) else reply or ():
        name = stream.decode() if isinstance(stream, bytes) else stream
        for entry_id, fields in found:
            entries.append((name, entry_id, fields or {}))
    return entries
