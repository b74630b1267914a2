"""Deciding one batch of commands, between loading it and committing it: no I/O.

Each order sees its commands one at a time, in stream order; a command already recorded is
answered with its recorded reply; a new order gets the next number handed to its merchant.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from actors import invariants
from actors import messages as m
from actors.errors import Refused
from actors.numbers import Key, NumberBlocks
from actors.order import Order, decide, replay
from actors.outcomes import Appended, Outcome, Prepared, Recorded, Wanted, event_id
from actors.publication import publish, transition
from actors.views import view_of

_encode = msgspec.json.Encoder().encode


class Decided(msgspec.Struct):
    outcomes: list[Outcome]  # one per command, in order
    fresh: list[Outcome]  # the commands not recorded before: their dedupe rows are written now
    changed: dict[str, Order]  # each order that appended events, as it stands after the batch
    encoded: dict[str, bytes]  # those orders as JSON, for the snapshot
    # Commands that break the core's invariants: no producer of this service sends one, so each is answered as
    # the system's fault, recorded nowhere, and set aside for the operators with the refusal.
    broken: dict[str, m.DomainFailure] = {}
    numbered: list[tuple[Key, int]] = []  # the order numbers the batch's new orders took


def needs_number(cmd: m.Command) -> bool:
    """A new order the worker has not numbered yet."""
    return isinstance(cmd, m.CreateOrder) and cmd.order_number == 0


def creations(envelopes: list[m.Envelope]) -> dict[Key, int]:
    """The new orders of a batch that need a number, per merchant and mode."""
    needed: dict[Key, int] = {}
    for e in envelopes:
        if needs_number(e.command):
            key = (e.command.merchant_id, e.command.livemode)
            needed[key] = needed.get(key, 0) + 1
    return needed


def wanted(envelopes: list[m.Envelope], held: Mapping[str, Order], numbers: NumberBlocks) -> Wanted:
    """What to read before deciding. The batch's new orders are numbered as if the worker held none: another lane
    may take those it holds while this batch waits for PostgreSQL."""
    creations = {e.command_id: (e.command_id, e.command.merchant_id, e.command.livemode)
                 for e in envelopes if needs_number(e.command)}
    return Wanted(
        command_ids=[e.command_id for e in envelopes],
        # A membership test per command: a set difference with the cache would walk all of it.
        order_ids=list({e.command.order_id for e in envelopes if e.command.order_id not in held}),
        creations=[(command_id, merchant_id, livemode,
                    max(0, numbers.wanted((merchant_id, livemode)) - numbers.held((merchant_id, livemode))))
                   for command_id, merchant_id, livemode in creations.values()],
        transfers=list({(e.command.network, e.command.tx_hash) for e in envelopes
                        if isinstance(e.command, m.SubmitRefundTx)}),
    )


def decide_batch(envelopes: list[m.Envelope], prepared: Prepared, held: Mapping[str, Order],
                 numbers: NumberBlocks) -> Decided:
    """New orders take their numbers from `numbers`, which first receives those the batch's prepare handed out; a
    number whose order was refused goes back to it."""
    for key, (first, last) in prepared.numbers.items():
        numbers.add(key, first, last)
    known = dict(prepared.recorded)
    claims = dict(prepared.claims)  # and the claims made by the batch's earlier commands
    decided = Decided([], [], {}, {})
    for env in envelopes:
        if env.command_id in known:
            decided.outcomes.append(answer_recorded(env, known[env.command_id]))
            continue
        if env.recorded_only:
            decided.outcomes.append(_refused(env, _NOTHING_RECORDED))
            continue
        cmd = env.command
        number = None
        if needs_number(cmd):
            number = ((cmd.merchant_id, cmd.livemode), numbers.take((cmd.merchant_id, cmd.livemode)))
            cmd = msgspec.structs.replace(cmd, order_number=number[1])
        elif isinstance(cmd, m.SubmitRefundTx):
            cmd = msgspec.structs.replace(cmd, claimed_by=claims.get((cmd.network, cmd.tx_hash), ""))
        order_id = cmd.order_id
        current = decided.changed[order_id] if order_id in decided.changed else held.get(order_id)
        try:
            outcome, state, state_json = decide_command(env.command_id, env.request_hash, cmd, current)
        except Refused as breach:
            decided.broken[env.command_id] = breach.failure
            decided.outcomes.append(internal_error(env))
            outcome = None
        if number is not None:
            if outcome is not None and outcome.appended:
                decided.numbered.append(number)
            else:
                numbers.give_back(*number)
        if outcome is None:
            continue
        if outcome.appended:
            decided.changed[order_id] = state
            decided.encoded[order_id] = state_json
            if isinstance(cmd, m.SubmitRefundTx):
                claims[(cmd.network, cmd.tx_hash)] = cmd.refund_id
        known[env.command_id] = Recorded(env.request_hash, outcome.reply)
        decided.outcomes.append(outcome)
        decided.fresh.append(outcome)
    return decided


def answer_recorded(env: m.Envelope, rec: Recorded) -> Outcome:
    reply = rec.reply
    if rec.version:  # recorded without the view it answered: the order as the command left it, from its events
        reply = _ok(env.command_id, _encode(view_of(replay(list(rec.history)))))
    if env.request_hash and rec.request_hash and env.request_hash != rec.request_hash:
        failure = m.DomainFailure(
            409, "idempotency_key_reused",
            "This Idempotency-Key was already used with a different request.", "Idempotency-Key",
        )
        reply = _encode(m.Reply(command_id=env.command_id, ok=False, error=failure))
    return Outcome(env.command_id, env.command.order_id, env.request_hash, reply)


_NOTHING_RECORDED = m.DomainFailure(401, "signature_replayed",
                                    "This signature was already used; sign each request afresh.", "X-Signature")
_STORE_FAILED = m.DomainFailure(503, "command_failed", "The command could not be stored; retry it.")
_CONTENT_REFUSED = m.DomainFailure(422, "command_refused",
                                   "The database refuses what this command holds; sending it again cannot succeed.")
_INTERNAL_ERROR = m.DomainFailure(500, "internal_error",
                                  "The command could not be applied and was set aside for the operators; nothing was "
                                  "changed. Quote its command_id when you contact support.")


def failed(env: m.Envelope, for_its_content: bool) -> Outcome:
    """The answer to a command the database would not store even on its own: for what it holds (a value the
    database can never take, so a retry is pointless), or for a passing fault (worth a retry)."""
    return _refused(env, _CONTENT_REFUSED if for_its_content else _STORE_FAILED)


def internal_error(env: m.Envelope) -> Outcome:
    """The answer to a command now in the dead-letter stream (the core kept raising on it, or no producer of
    this service could have sent it): it records nothing."""
    return _refused(env, _INTERNAL_ERROR)


def internal_error_reply(command_id: str) -> bytes:
    """The same answer, to an entry that named its command but did not decode as one."""
    return _encode(m.Reply(command_id=command_id, ok=False, error=_INTERNAL_ERROR))


def _refused(env: m.Envelope, failure: m.DomainFailure) -> Outcome:
    """An answer that records nothing: the command may be sent again."""
    return Outcome(env.command_id, env.command.order_id, env.request_hash,
                   _encode(m.Reply(command_id=env.command_id, ok=False, error=failure)))


def decide_command(command_id: str, request_hash: str, cmd: m.Command,
                   current: Order | None) -> tuple[Outcome, Order | None, bytes]:
    """One command through the core as the actor runs it: its outcome (reply and events), the state after it and
    that state as JSON. The dry-run replay (service/dry_run.py) runs recorded commands through it."""
    try:
        events = decide(current, cmd)
    except Refused as refusal:
        if refusal.failure.code == invariants.CODE:
            raise
        reply = m.Reply(command_id=command_id, ok=False, error=refusal.failure)
        outcome = Outcome(command_id, cmd.order_id, request_hash, _encode(reply), kind=_kind(cmd), at=cmd.at)
        return outcome, current, b""
    state = current
    appended = []
    for event, state, order_status in transition(current, events):
        appended_id = event_id(command_id, state.version, event.at)
        public = publish(appended_id, state.version, event, state, order_status)
        appended.append(Appended(appended_id, state.version, event, public, _encode(public)))
    reply = _ok(command_id, _encode(view_of(state)))
    outcome = Outcome(command_id, cmd.order_id, request_hash, reply, tuple(appended), kind=_kind(cmd), at=cmd.at,
                      version=state.version)
    return outcome, state, _encode(state)


def _ok(command_id: str, view_json: bytes) -> bytes:
    return _encode(m.Reply(command_id=command_id, ok=True, state=msgspec.Raw(view_json)))


def _kind(cmd: m.Command) -> str:
    return cmd.__struct_config__.tag
