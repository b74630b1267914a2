"""Schema versions of what the order actor stores, and the upcasters that read older versions.

Events (`events.data`) and snapshots (`orders.state`) are stored with the version they were written in
(`events.schema`, `orders.state_schema`). Reading one of the current version decodes it straight into its
struct; an older one is decoded to plain data, brought up one version at a time by the steps below, then
decoded. A change of a stored shape (a field renamed, split or moved) bumps the version and adds the step
that turns the old shape into the new one; nothing stored is ever rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from actors import messages as m
from actors.state import Order

Raw = dict[str, Any]
Step = Callable[[Raw], Raw]


def _event_v1_refund_source_is_flow(event: Raw) -> Raw:
    """v2 calls a refund's origin (merchant or customer) `flow`, as the command always did."""
    if event.get("type") == "payment.refund.requested":
        event["flow"] = event.pop("source")
    return event


def _snapshot_v1_refund_source_is_flow(order: Raw) -> Raw:
    for refund in order.get("refunds", ()):
        refund["flow"] = refund.pop("source")
    return order


class Upcaster:
    """Decodes one stored kind at any version it was written in, as the current struct."""

    def __init__(self, kind: Any, steps: dict[int, Step]):
        self.kind = kind
        self.steps = steps  # version n -> the step to n + 1
        self.current = max(steps, default=0) + 1
        self._decode = msgspec.json.Decoder(kind).decode

    def decode(self, data: bytes | str, version: int):
        if version == self.current:
            return self._decode(data)
        if not 1 <= version < self.current:
            raise ValueError(f"schema version {version} of {self.kind} is not one this code reads (1 to {self.current})")
        raw = msgspec.json.decode(data)
        for step in range(version, self.current):
            raw = self.steps[step](raw)
        return msgspec.convert(raw, self.kind)


EVENTS = Upcaster(m.Event, {1: _event_v1_refund_source_is_flow})
SNAPSHOTS = Upcaster(Order, {1: _snapshot_v1_refund_source_is_flow})


def event(data: bytes | str, version: int) -> m.Event:
    return EVENTS.decode(data, version)


def snapshot(data: bytes | str, version: int) -> Order:
    return SNAPSHOTS.decode(data, version)
