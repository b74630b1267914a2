"""From a verified request to an actor's answer: body decoding, ids, Idempotency-Key, the round trip."""

from __future__ import annotations

from collections.abc import Collection
from typing import TypeVar

import msgspec
from aiohttp import web
from redis.exceptions import RedisError

from actors import invariants, views
from actors import messages as m
from actors.errors import Refused, not_found
from actors.views import OrderView
from common import logs, money
from common.ids import derived_id, keyed_command_id, random_id, same_but_time
from streams.producer import Limited, ReplyTimeout, SignatureSpent
from web.edge import decoding, rate_limits, request_ids
from web.edge.app_state import COMMAND_ID, SIGNED_AT_MS, UNSPENT_SIGNATURE, caller, ctx
from web.edge.errors import ApiError
from web.edge.idempotency import idempotency_key, request_hash
from web.edge.signing import replay_ttl, replayed

T = TypeVar("T")


async def body(request: web.Request, kind: type[T]) -> T:
    return decoding.decode(await request.read(), kind)


def amount(text: str, param: str) -> int:
    try:
        return money.parse(text)
    except money.AmountError as exc:
        raise ApiError(422, "invalid_amount", f"`{param}` {exc}.", param) from None


class Ids:
    """Ids of one request: random, or derived from its Idempotency-Key (or its signature) so a retry names the same
    objects. All begin with a time (common/ids.py): the signed timestamp, which a replay of the same bytes shares,
    or now. A keyed request's command id has none: every retry of the key names one command, whose record in the
    order actor's batch answers it, so the key costs the web nothing before its command is sent."""

    def __init__(self, seed: str | None, at_ms: int, secret: bytes, keyed: bool = False):
        self._seed, self._at_ms, self._secret, self._keyed = seed, at_ms, secret, keyed

    def make(self, prefix: str, what: str, nbytes: int = 12) -> str:
        if self._seed is None:
            return random_id(prefix, nbytes, self._at_ms)
        return derived_id(prefix, self._seed, what, nbytes, self._secret, self._at_ms)

    def command_id(self) -> str:
        return keyed_command_id(self._seed, self._secret) if self._keyed else self.make("cmd", "command")


def made_by(own: str, found: Collection[str]) -> str:
    """Of the ids an answer holds, the one naming the object this request made: its own, or, when a retry of its
    Idempotency-Key was answered with what the first request made, that one's, which differs in its time alone."""
    return own if own in found else next((f for f in found if same_but_time(f, own)), own)


def ids_of(request: web.Request) -> Ids:
    c, api_key, key = ctx(request), caller(request), idempotency_key(request)
    now_ms = int(c.clock().timestamp() * 1000)
    if key:
        # Retries made later get ids of a later time, and the same routing part: their order's partition, where
        # the record of the key answers them with the order the first one made.
        seed = f"{api_key.merchant_id}:{api_key.livemode}:{key}"
        return Ids(seed, now_ms, c.derived.ids, keyed=True)
    if UNSPENT_SIGNATURE in request:
        # Its replay guard lives in the partition of the order the request names: a replay of a creation
        # must name the very same new order to meet the guard there.
        seed = f"{api_key.merchant_id}:{api_key.livemode}:signature:{request[UNSPENT_SIGNATURE]}"
        return Ids(seed, request[SIGNED_AT_MS], c.derived.ids)
    return Ids(None, now_ms, c.derived.ids)


def checked(command: m.Command) -> m.Command:
    """The command, once it keeps the order core's bounds: the core sets aside as the system's fault any
    command that breaks them, so none is sent. An id of the wrong shape (a path's `order_id`, a body's
    `refund_id`) names nothing that exists: 404, as an unknown id of the right shape gets."""
    try:
        invariants.check(command)
    except Refused as breach:
        f = breach.failure
        if f.param and f.param.endswith("_id"):
            f = not_found(f.param.removesuffix("_id")).failure
        raise ApiError(f.status, f.code, f.message, f.param) from None
    return command


async def submit(request: web.Request, ids: Ids, command: m.Command) -> OrderView:
    """Send a signed request's command to its order's actor and wait; a refusal becomes an ApiError."""
    envelope = m.Envelope(command_id=ids.command_id(), command=checked(command),
                          request_hash=request_hash(request.method, request.path, await request.read()),
                          request_id=request_ids.of(request))
    return await ask(request, envelope, signed=True)


RETRY_WITH_KEY = "The command was accepted but not answered in time; retry with the same Idempotency-Key."


async def ask(request: web.Request, envelope: m.Envelope, *, signed: bool = False,
              timeout_message: str = RETRY_WITH_KEY) -> OrderView:
    """The round trip of every command the web sends, the API's and the hosted pages' alike. A signed request
    spends its signature with the command; a repeat with an Idempotency-Key gets only a recorded answer."""
    c = ctx(request)
    request[COMMAND_ID] = envelope.command_id
    logs.note(command_id=envelope.command_id, order_id=envelope.command.order_id,
              merchant_id=envelope.command.merchant_id)
    try:
        if not signed:
            reply = await c.bus.ask(envelope)
        else:
            taken = request.get(rate_limits.TAKE_WITH_COMMAND)
            try:
                reply = await c.bus.ask(envelope, request.get(UNSPENT_SIGNATURE), replay_ttl(c.settings), taken)
            except Limited:
                raise rate_limits.api_key_refusal(rate_limits.taken_verdict(taken)) from None
            except SignatureSpent:
                if idempotency_key(request) is None:
                    raise replayed() from None
                reply = await c.bus.ask(msgspec.structs.replace(envelope, recorded_only=True))
    except ReplyTimeout:
        raise ApiError(504, "command_timeout", timeout_message, command_id=envelope.command_id) from None
    except (RedisError, ConnectionError, OSError):
        raise ApiError(503, "service_unavailable", "The command queue is unavailable; retry shortly.",
                       command_id=envelope.command_id) from None
    if not reply.ok:
        f = reply.error
        # A server-side failure names its command, for the operators to find it among the dead letters.
        named = {"command_id": envelope.command_id} if f.status >= 500 else {}
        raise ApiError(f.status, f.code, f.message, f.param, **named)
    return views.decode(reply.state)
