"""An order's timeline rebuilt from what the actor recorded, and checked against its stored snapshot.

`timeline` lists each command (id, kind, time, request hash, the reply it got), the events it appended and the
order as those events leave it; the last state must equal the stored snapshot, else the first field that differs
is named. `since` checks every order touched since a time (on-call, and after a deploy that changed the core or
the schema). Read through actors.history and actors.store, so stored events of any schema version upcast first.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg
import msgspec

from actors import history, store
from actors.order import Order, evolve, replay

_NOT_LINKED = None  # a step of events no recorded command names (recorded before commands were kept whole)


class Step(msgspec.Struct, kw_only=True):
    command_id: str | None
    kind: str | None = None
    at: datetime | None = None
    request_hash: str | None = None
    reply: dict[str, Any] | None = None  # ok, and the error it answered (the state it carried is state_after)
    events: list[dict[str, Any]] = []  # seq, event_id, type, at
    state_after: dict[str, Any] | None = None


class Timeline(msgspec.Struct, kw_only=True):
    order_id: str
    events: int
    commands: list[Step]
    matches: bool  # the events rebuild the stored snapshot
    first_difference: str | None = None


def first_difference(rebuilt: Any, stored: Any, path: str = "") -> str | None:
    """Where two plain values first differ, as `path: rebuilt X, stored Y`; None when they are equal."""
    if isinstance(rebuilt, dict) and isinstance(stored, dict):
        for key in list(rebuilt) + [k for k in stored if k not in rebuilt]:
            found = first_difference(rebuilt.get(key), stored.get(key), f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(rebuilt, list) and isinstance(stored, list) and len(rebuilt) == len(stored):
        for i, (a, b) in enumerate(zip(rebuilt, stored)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    if rebuilt != stored:
        return f"{path or 'order'}: rebuilt {msgspec.json.encode(rebuilt).decode()}, stored {msgspec.json.encode(stored).decode()}"
    return None


def compare(rebuilt: Order | None, stored: Order | None) -> str | None:
    return first_difference(msgspec.to_builtins(rebuilt), msgspec.to_builtins(stored))


def _reply(raw: bytes) -> dict[str, Any]:
    reply = msgspec.json.decode(raw)
    return {"ok": reply.get("ok"), "error": reply.get("error")}


def _event(stored: history.StoredEvent) -> dict[str, Any]:
    return {"seq": stored.seq, "event_id": stored.event_id, "type": stored.event.__struct_config__.tag,
            "at": stored.event.at}


def steps(events: list[history.StoredEvent], commands: list[history.RecordedCommand]) -> list[Step]:
    """Commands in the order they acted: each where its first event falls in the log; a command that appended
    nothing (refused) before the first later-committed one."""
    owner = {e.event_id: c for c in commands for e in history.produced_by(c.command_id, events)}
    placed: list[tuple[Step, datetime | None]] = []
    state: Order | None = None
    for stored in events:
        command = owner.get(stored.event_id)
        step_id = command.command_id if command else _NOT_LINKED
        if not placed or placed[-1][0].command_id != step_id or step_id is _NOT_LINKED and placed[-1][1] is not None:
            placed.append((_step(command), command.recorded_at if command else None))
        state = evolve(state, stored.event)
        placed[-1][0].events.append(_event(stored))
        placed[-1][0].state_after = msgspec.to_builtins(state)
    acted = {c.command_id for c in owner.values()}
    for command in commands:
        if command.command_id in acted:
            continue
        at = next((i for i, (_s, t) in enumerate(placed) if t is not None and t > command.recorded_at), len(placed))
        before = placed[at - 1][0].state_after if at else None
        step = _step(command)
        step.state_after = before
        placed.insert(at, (step, command.recorded_at))
    return [step for step, _t in placed]


def _step(command: history.RecordedCommand | None) -> Step:
    if command is None:
        return Step(command_id=_NOT_LINKED)
    return Step(command_id=command.command_id, kind=command.kind, at=command.at, request_hash=command.request_hash,
                reply=_reply(command.reply))


async def timeline(conn: asyncpg.Connection, order_id: str) -> Timeline | None:
    events = await history.events(conn, order_id)
    snapshot = await store.snapshot(conn, order_id)
    if not events and snapshot is None:
        return None
    differs = compare(replay([e.event for e in events]), snapshot)
    return Timeline(order_id=order_id, events=len(events), commands=steps(events, await history.commands(conn, order_id)),
                    matches=differs is None, first_difference=differs)


class Diverged(msgspec.Struct):
    order_id: str
    first_difference: str


class Summary(msgspec.Struct, kw_only=True):
    since: datetime
    merchant_id: str | None
    orders: int
    matching: int
    diverged: list[Diverged]


async def since(conn: asyncpg.Connection, when: datetime, merchant_id: str | None = None) -> Summary:
    """Every order updated since `when` (of one merchant), rebuilt from its events and compared with its snapshot."""
    order_ids = [r["order_id"] for r in await conn.fetch(
        "SELECT order_id FROM orders WHERE updated_at >= $1 AND ($2::text IS NULL OR merchant_id = $2)"
        " ORDER BY updated_at, order_id", when, merchant_id)]
    diverged = []
    for order_id in order_ids:
        differs = compare(replay(await store.history(conn, order_id)), await store.snapshot(conn, order_id))
        if differs:
            diverged.append(Diverged(order_id, differs))
    return Summary(since=when, merchant_id=merchant_id, orders=len(order_ids), matching=len(order_ids) - len(diverged),
                   diverged=diverged)


def timeline_text(found: Timeline) -> str:
    lines = [f"order {found.order_id}: {found.events} events, {len(found.commands)} steps"]
    for step in found.commands:
        answer = "-" if step.reply is None else "ok" if step.reply["ok"] else \
            f"{step.reply['error']['status']} {step.reply['error']['code']}"
        status = (step.state_after or {}).get("status", "-")
        lines.append(f"  {step.at.isoformat() if step.at else '-':<32} {step.kind or '?':<24} "
                     f"{step.command_id or '(no recorded command)':<28} {answer:<28} -> {status}  "
                     + ", ".join(e["type"] for e in step.events))
    lines.append("final state matches the stored snapshot" if found.matches
                 else f"DIVERGES from the stored snapshot at {found.first_difference}")
    return "\n".join(lines)


def summary_text(found: Summary) -> str:
    lines = [f"orders touched since {found.since.isoformat()}"
             + (f" of merchant {found.merchant_id}" if found.merchant_id else "")
             + f": {found.orders}, matching their snapshot: {found.matching}, diverging: {len(found.diverged)}"]
    lines += [f"DIVERGES {d.order_id}: {d.first_difference}" for d in found.diverged]
    return "\n".join(lines)
