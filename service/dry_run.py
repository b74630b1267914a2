"""Recorded commands run again through today's core, and compared with what they recorded (`service replay
--partition P --from ID --dry-run`): how an engineer checks that a deploy does not change history, and how a bad
decision is reproduced locally. Nothing is written.

The commands come from the partition's stream (so only within STREAM_RETENTION_S); each order starts from the
state its events rebuild up to the first event of a command at or after `--from` (every later command of an order
is on the same partition, and an event's id names its command). After each command the order moves on by the
events it recorded, not by today's, so one divergence does not hide or cause the next.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import msgspec

from actors import batch, history
from actors import messages as m
from actors.errors import Refused
from actors.order import Order, evolve, replay
from streams.connection import Client, parse_entry_id
from streams.names import Keys

_decode_envelope = msgspec.json.Decoder(m.Envelope).decode


class Difference(msgspec.Struct, kw_only=True):
    entry_id: str
    command_id: str
    kind: str
    order_id: str
    what: str  # "events", "reply" or "raises"
    recorded: Any
    now: Any


class Skipped(msgspec.Struct):
    entry_id: str
    command_id: str
    reason: str


class DryRun(msgspec.Struct, kw_only=True):
    stream: str
    from_id: str
    to_id: str
    first_retained: str | None  # the oldest entry the stream still holds
    entries: int  # in the range
    rerun: int  # commands run again
    skipped: list[Skipped]
    differences: list[Difference]


def _in_range(found: str, to_id: str) -> bool:
    return to_id == "+" or parse_entry_id(found) <= parse_entry_id(to_id)


class _Order:
    """One order as the dry run walks it: its recorded events and commands, and its state so far."""

    def __init__(self, events: list[history.StoredEvent], commands: list[history.RecordedCommand],
                 later: set[str]):
        self.events = events
        self.commands = {c.command_id: c for c in commands}
        starts = [e.seq for c in later for e in history.produced_by(c, events)]
        first = min(starts, default=None)
        self.state: Order | None = replay([e.event for e in events if first is None or e.seq < first])


async def dry_run(conn: asyncpg.Connection, redis: Client, keys: Keys, partition: int, from_id: str,
                  to_id: str = "+") -> DryRun:
    stream = keys.commands(partition)
    oldest = await redis.xrange(stream, "-", "+", count=1)
    # To the end of the stream: an order's later commands say where its state before `from_id` ends.
    entries = [(e.decode(), f) for e, f in await redis.xrange(stream, from_id, "+")]
    decoded: list[tuple[str, m.Envelope | None]] = []
    for entry_id, fields in entries:
        try:
            decoded.append((entry_id, _decode_envelope(fields.get(b"m", b""))))
        except msgspec.DecodeError:
            decoded.append((entry_id, None))
    later: dict[str, set[str]] = {}
    for _entry_id, env in decoded:
        if env is not None:
            later.setdefault(env.command.order_id, set()).add(env.command_id)
    orders = {order_id: _Order(await history.events(conn, order_id), await history.commands(conn, order_id), ids)
              for order_id, ids in later.items()}
    found = DryRun(stream=stream, from_id=from_id, to_id=to_id,
                   first_retained=oldest[0][0].decode() if oldest else None, entries=0, rerun=0, skipped=[],
                   differences=[])
    seen: set[str] = set()
    for entry_id, env in decoded:
        if not _in_range(entry_id, to_id):
            break
        found.entries += 1
        reason = _skip_reason(env, seen, orders)
        if reason:
            found.skipped.append(Skipped(entry_id, env.command_id if env else "", reason))
            continue
        seen.add(env.command_id)
        found.rerun += 1
        difference = await _rerun(conn, entry_id, env, orders[env.command.order_id])
        if difference:
            found.differences.append(difference)
    return found


def _skip_reason(env: m.Envelope | None, seen: set[str], orders: dict[str, _Order]) -> str:
    if env is None:
        return "does not decode as a command"
    if env.command_id in seen:
        return "a repeat of a command run above (a retry or a dead letter sent again)"
    if env.command_id not in orders[env.command.order_id].commands:
        return "never recorded: refused at intake, set aside as a dead letter, or not applied yet"
    return ""


async def _rerun(conn: asyncpg.Connection, entry_id: str, env: m.Envelope, order: _Order) -> Difference | None:
    recorded = order.commands[env.command_id]
    recorded_events = [e.event for e in history.produced_by(env.command_id, order.events)]
    cmd = await _as_the_actor_saw_it(conn, env.command, recorded_events)
    kind = cmd.__struct_config__.tag

    def differs(what: str, was: Any, now: Any) -> Difference:
        return Difference(entry_id=entry_id, command_id=env.command_id, kind=kind, order_id=cmd.order_id, what=what,
                          recorded=was, now=now)

    try:
        outcome, _state, _json = batch.decide_command(env.command_id, env.request_hash, cmd, order.state)
    except Refused as breach:  # an invariant the core enforces now and did not then
        return differs("raises", _events(recorded_events), f"refused as breaking an invariant: {breach.failure.code}")
    except Exception as exc:  # noqa: BLE001 - new code that crashes on an old command is the divergence to report
        return differs("raises", _events(recorded_events), f"{type(exc).__name__}: {exc}")
    finally:
        for event in recorded_events:  # history, not today's decision, carries the order on
            order.state = evolve(order.state, event)
    now_events = [a.event for a in outcome.appended]
    if _events(now_events) != _events(recorded_events):
        return differs("events", _events(recorded_events), _events(now_events))
    # An answer recorded with its order's view is compared whole; one recorded by the version it answered, as such.
    answered = outcome.recorded if recorded.version else outcome.reply
    was, now = msgspec.json.decode(recorded.reply), msgspec.json.decode(answered)
    if was != now:
        return differs("reply", was, now)
    return None


def _events(events: list[m.Event]) -> list[dict[str, Any]]:
    return msgspec.to_builtins(events)


async def _as_the_actor_saw_it(conn: asyncpg.Connection, cmd: m.Command, recorded: list[m.Event]) -> m.Command:
    """The command with what the actor filled in before deciding: a new order's number (as recorded), and the
    refund that holds a posted transfer."""
    if isinstance(cmd, m.CreateOrder) and cmd.order_number == 0:
        created = next((e for e in recorded if isinstance(e, m.OrderCreated)), None)
        return msgspec.structs.replace(cmd, order_number=created.order_number if created else 0)
    if isinstance(cmd, m.SubmitRefundTx):
        holder = await conn.fetchval("SELECT refund_id FROM refund_transactions WHERE network = $1 AND tx_hash = $2",
                                     cmd.network, cmd.tx_hash)
        return msgspec.structs.replace(cmd, claimed_by=holder or "")
    return cmd


def text(found: DryRun) -> str:
    lines = [(f"{found.stream} from {found.from_id} to {found.to_id}: {found.entries} entries, {found.rerun} commands"
             f" run again, {len(found.skipped)} skipped, {len(found.differences)} differ")]
    if found.first_retained and parse_entry_id(found.from_id if found.from_id not in ("-", "0") else "0-0") < parse_entry_id(found.first_retained):
        lines.append(f"note: the stream keeps entries from {found.first_retained} on (STREAM_RETENTION_S)")
    lines += [f"DIFFERS {d.entry_id} {d.command_id} {d.kind} on {d.order_id}: {d.what}\n"
              f"  recorded: {msgspec.json.encode(d.recorded).decode()}\n  now:      {msgspec.json.encode(d.now).decode()}"
              for d in found.differences]
    lines += [f"skipped {s.entry_id} {s.command_id or '-'}: {s.reason}" for s in found.skipped]
    return "\n".join(lines)
