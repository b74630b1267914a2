"""What deciding a batch reads and yields, as plain structs: what a batch needs first (`Wanted`), what it found
(`Prepared`, `Recorded`), and what each command did (`Outcome`, `Appended`). No I/O: actors/batch.py decides on
these, actors/store.py reads and writes them."""

from __future__ import annotations

from datetime import datetime

import msgspec

from actors import messages as m
from actors.order import Order
from actors.publication import PublicEvent
from common.ids import derived_id, is_keyed_command, made_at

_encode = msgspec.json.Encoder().encode


def event_id(command_id: str, seq: int, at: datetime) -> str:
    """The id of the event a command appended as the order's `seq`-th at `at` (the same on every retry of the
    command). It begins with the command's time, so a batch's events land together in the index: its id's, or for a
    keyed command, whose id has none, the time the command carried (which its events carry too)."""
    at_ms = made_at(command_id)
    if at_ms is None and is_keyed_command(command_id):
        at_ms = int(at.timestamp() * 1000)
    return derived_id("evt", command_id, str(seq), at_ms=at_ms)


class Recorded(msgspec.Struct, frozen=True):
    request_hash: str
    reply: bytes
    # An answer that held the order's view is recorded without it: the version it answered, and the order's events
    # up to that version, from which the batch rebuilds the view. 0 and none for an answer recorded whole.
    version: int = 0
    history: tuple[m.Event, ...] = ()


class Appended(msgspec.Struct, frozen=True):
    event_id: str
    seq: int
    event: m.Event
    public: PublicEvent
    payload: bytes  # `public` as JSON, encoded once for the outbox and the events stream


class Outcome(msgspec.Struct, frozen=True):
    """What one command did: the reply it earned and the events it appended."""

    command_id: str
    order_id: str
    request_hash: str
    reply: bytes
    appended: tuple[Appended, ...] = ()
    # What the command was and when it was sent, recorded beside its reply for the order's timeline; empty on an
    # outcome that records nothing.
    kind: str = ""
    at: datetime | None = None
    version: int = 0  # of the order whose view the reply holds; 0 when it holds none

    @property
    def recorded(self) -> bytes:
        """The reply as the dedupe table keeps it: an answer holding the order's view names its version instead, so
        the order's JSON is written once per command (as its state)."""
        return _encode(m.Reply(command_id=self.command_id, ok=True)) if self.version else self.reply


class Wanted(msgspec.Struct, frozen=True):
    """What a batch needs before its commands can be decided."""

    command_ids: list[str]
    order_ids: list[str]  # orders the worker does not hold in memory
    # (command_id, merchant_id, livemode, extra) of orders needing a number; `extra` more are handed out with
    # them, for the worker to hold (actors/numbers.py)
    creations: list[tuple[str, str, bool, int]]
    transfers: list[tuple[str, str]]  # (network, tx_hash) of refund transfers posted in the batch


class Prepared(msgspec.Struct):
    recorded: dict[str, Recorded]
    orders: dict[str, Order]
    # The order numbers handed to this batch and the worker's block, per (merchant_id, livemode): first and last,
    # inclusive.
    numbers: dict[tuple[str, bool], tuple[int, int]]
    # The refund holding each of the batch's posted transfers, where one already does.
    claims: dict[tuple[str, str], str]
