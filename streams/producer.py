"""Sends commands onto their partition streams and waits for the replies addressed to this process.

The bus knows entries, partitions and reply streams, not what a command means: a subclass names how an
envelope is partitioned and how a reply entry decodes (actors/bus.py for order commands)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import msgspec

from streams import buckets
from streams.connection import Client, blocking_reader, close_reader, is_cluster, stream_entries
from streams.names import Keys
from streams.pipeliner import Pipeliner, Script

log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder().encode
REPLY_BLOCK_MS = 200  # also how long stopping a bus may take
REPLY_STREAM_MAXLEN = 10_000
# The leading hex digits of a request's hash that its reply carries: enough to tell apart two requests waiting on one
# command id (an Idempotency-Key sent with two bodies at once).
HASH_CHARS = 16


class ReplyTimeout(Exception):
    pass


class SignatureSpent(Exception):
    """The request's signature was used before: its command was not enqueued."""


class Limited(Exception):
    """The caller's bucket had no token for the command: nothing was spent or enqueued."""


# Spend the signature and append its command, or neither: false when the signature was spent before. Both keys share
# the partition's hash tag, so the script stays within one Redis Cluster slot.
_SPEND_THEN_ADD_FUNCTION = """
local function spend_then_add(seen, stream, ttl, message)
  if not redis.call('SET', seen, '1', 'NX', 'EX', ttl) then return false end
  return redis.call('XADD', stream, '*', 'm', message)
end
"""
_SPEND_THEN_ADD = Script(_SPEND_THEN_ADD_FUNCTION + "return spend_then_add(KEYS[1], KEYS[2], ARGV[1], ARGV[2])")
# On a single server (where one script may touch keys of any slot) the caller's token is taken in the same call,
# first: a refusal spends and enqueues nothing. The bucket's verdict comes back, with 1 when the command was
# enqueued and 0 when its signature was spent before.
_TAKE_SPEND_THEN_ADD = Script(buckets.TAKE_FUNCTION + _SPEND_THEN_ADD_FUNCTION + """
local verdict = take(KEYS[3], tonumber(ARGV[3]), tonumber(ARGV[4]), 1)
if verdict[1] == 0 then return verdict end
verdict[5] = spend_then_add(KEYS[1], KEYS[2], ARGV[1], ARGV[2]) and 1 or 0
return verdict
""")


class CommandBus:
    """Envelopes are msgspec structs with `command_id` and `reply_to`; replies carry `command_id`."""

    # A reply entry holds the replies of one consumer batch to this process, as a JSON array.
    decode_replies: Callable[[bytes], list[Any]]

    @staticmethod
    def partition_key(envelope: Any) -> str:
        raise NotImplementedError

    def __init__(self, redis: Client, keys: Keys, consumer: str, timeout_s: float):
        self.redis = redis
        self.pipeliner = Pipeliner(redis)
        self.keys = keys
        self.reply_stream = keys.replies(consumer)
        self.timeout_s = timeout_s
        # Several requests may wait on one command id (retries with one Idempotency-Key), each with its request's
        # hash: a reply serves every request of the hash it names (they are the same request, answered the same
        # recorded reply), and only those; a request under the same key with another body waits for its own reply
        # (the command's record refuses it).
        self._waiting: dict[str, list[tuple[asyncio.Future[Any], str]]] = {}
        self._replies: asyncio.Task | None = None
        self._stopping = False

    async def start(self) -> None:
        self._replies = asyncio.create_task(self._reply_loop())

    async def stop(self) -> None:
        await self.pipeliner.stop()
        if self._replies is not None:
            # Not cancelled: the loop ends after its current read (at most REPLY_BLOCK_MS) and closes its
            # connection itself.
            self._stopping = True
            await self._replies
        with contextlib.suppress(Exception):
            await self.redis.delete(self.reply_stream)

    async def send(self, envelope: Any, signature: str | None = None, signature_ttl_s: int = 0,
                   take: buckets.Take | None = None) -> None:
        """Append the command to its partition's stream, without waiting for an answer. With a request's
        signature, spend it in the same call: a signature spent already enqueues nothing (SignatureSpent). With
        a token to take, take it first in that call too (on a single server only: see `takes_with_commands`);
        no token enqueues nothing (Limited)."""
        partition = self.keys.partition_of(self.partition_key(envelope))
        stream = self.keys.commands(partition)
        if signature is None:
            await self.pipeliner.call("XADD", stream, "*", "m", _encode(envelope))
            return
        seen = self.keys.signature_seen(signature, partition)
        if take is None:
            if await self.pipeliner.run(_SPEND_THEN_ADD, 2, seen, stream, signature_ttl_s, _encode(envelope)) is None:
                raise SignatureSpent(signature)
            return
        bucket = take.bucket
        reply = await self.pipeliner.run(_TAKE_SPEND_THEN_ADD, 3, seen, stream, bucket.key, signature_ttl_s,
                                         _encode(envelope), bucket.per_us, bucket.burst)
        take.verdict = buckets.verdict(reply)
        if not take.verdict.allowed:
            raise Limited(signature)
        if not reply[4]:
            raise SignatureSpent(signature)

    @property
    def takes_with_commands(self) -> bool:
        """Whether send() can take a token in the call that enqueues: a script on a Redis Cluster may only touch
        keys of one slot, and a caller's bucket is not in its command's partition."""
        return not is_cluster(self.redis)

    async def ask(self, envelope: Any, signature: str | None = None, signature_ttl_s: int = 0,
                  take: buckets.Take | None = None) -> Any:
        envelope = msgspec.structs.replace(envelope, reply_to=self.reply_stream)
        loop = self.pipeliner.loop
        answer: asyncio.Future[Any] = loop.create_future()
        waiter = (answer, getattr(envelope, "request_hash", "")[:HASH_CHARS])
        waiters = self._waiting.setdefault(envelope.command_id, [])
        waiters.append(waiter)
        # A plain timer on the answer itself: wait_for would wrap it in two more futures per request.
        timer = loop.call_later(self.timeout_s, _expire, answer, envelope.command_id)
        started, outcome = time.perf_counter(), "failed"
        try:
            await self.send(envelope, signature, signature_ttl_s, take)
            reply = await answer
            outcome = "answered"
            return reply
        except ReplyTimeout:
            outcome = "timeout"
            raise
        finally:
            self.round_trip(outcome, time.perf_counter() - started)
            timer.cancel()
            waiters.remove(waiter)
            if not waiters:
                self._waiting.pop(envelope.command_id, None)

    def round_trip(self, outcome: str, seconds: float) -> None:
        """How long ask() took from enqueueing to its end (`answered`, `timeout` or `failed`); a subclass
        measures it."""

    def read_failed(self, exc: Exception) -> None:
        """Reading this process's replies failed, and is tried again at once; a subclass tells Redis out of reach
        (one warning an episode) from a bug (common/faults.py)."""
        log.error("reading replies failed; retrying", exc_info=exc)

    async def _reply_loop(self) -> None:
        reader = blocking_reader(self.redis)
        last_id: bytes | str = "0-0"
        try:
            while not self._stopping:
                try:
                    found = await reader.xread({self.reply_stream: last_id}, count=1000, block=REPLY_BLOCK_MS)
                except Exception as exc:  # noqa: BLE001 - read_failed tells Redis away from a bug
                    self.read_failed(exc)
                    await asyncio.sleep(0.5)
                    continue
                for _stream, entry_id, fields in stream_entries(found):
                    last_id = entry_id
                    self._answer(entry_id, fields)
        finally:
            await close_reader(self.redis, reader)

    def _answer(self, entry_id: bytes, fields: dict[bytes, bytes]) -> None:
        try:
            replies = self.decode_replies(fields[b"r"])
        except (KeyError, msgspec.DecodeError):
            log.error("undecodable reply %s on %s", entry_id, self.reply_stream)
            return
        # The hashes of the requests answered, in the replies' order; none on entries written before they were.
        hashes = fields.get(b"h", b"").decode().split(",")
        for n, reply in enumerate(replies):
            answered = hashes[n] if n < len(hashes) else ""
            for waiter, asked in self._waiting.get(reply.command_id, ()):
                if not waiter.done() and (answered == asked or not answered or not asked):
                    waiter.set_result(reply)


def reply_call(reply_stream: str, answers: list[tuple[bytes, str]]) -> tuple:
    """One entry on a process's reply stream holding a batch's encoded replies to it (a JSON array, as
    `CommandBus.decode_replies` reads it) and the hashes of the requests they answer (`request_hash`, '' for a
    command no request sent), as a call for a pipeline."""
    return ("XADD", reply_stream, "MAXLEN", "~", REPLY_STREAM_MAXLEN, "*", "r",
            b"[" + b",".join(reply for reply, _ in answers) + b"]", "h", ",".join(h[:HASH_CHARS] for _, h in answers))


def _expire(answer: asyncio.Future, command_id: str) -> None:
    if not answer.done():
        answer.set_exception(ReplyTimeout(command_id))
