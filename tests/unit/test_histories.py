"""Recorded histories (tests/histories/*.json): stored events must still rebuild the recorded order, and the
recorded commands must still decide the very same events. A failure means stored orders would change meaning.

The histories were recorded in schema 1. Schema 2 renamed a refund's `source` to `flow` (in the
payment.refund.requested event and in the snapshot): they keep rebuilding through the upcasters."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from actors import schema
from actors.order import replay
from tests.histories.record import FLOWS, as_stored, record

HISTORIES = sorted((Path(__file__).resolve().parent.parent / "histories").glob("*.json"))


def _recorded(path: Path) -> dict:
    return json.loads(path.read_text())


def _events(recorded: dict) -> list:
    # Decoded from JSON bytes, as the event store hands them back, in the schema they were written in.
    return [schema.event(json.dumps(e).encode(), recorded["schema"]["events"]) for e in recorded["events"]]


def test_every_flow_has_its_recording():
    assert {path.stem for path in HISTORIES} == set(FLOWS)


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_stored_events_rebuild_the_recorded_order(path):
    recorded = _recorded(path)
    stored = schema.snapshot(json.dumps(recorded["state"]).encode(), recorded["schema"]["state"])
    assert replay(_events(recorded)) == stored


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_recorded_commands_still_decide_the_recorded_events(path):
    recorded = _recorded(path)
    today = record(FLOWS[path.stem])
    assert today["events"] == [as_stored(e) for e in _events(recorded)]


def test_the_histories_predate_the_rename_they_replay_across():
    recorded = _recorded(Path(__file__).resolve().parent.parent / "histories" / "paid_then_refunded_in_two_parts.json")
    assert recorded["schema"] == {"events": 1, "state": 1}
    [requested] = [e for e in recorded["events"] if e["type"] == "payment.refund.requested"][:1]
    assert requested["source"] == "merchant" and "flow" not in requested
    assert all("source" in r and "flow" not in r for r in recorded["state"]["refunds"])
    assert [r.flow for r in replay(_events(recorded)).refunds] == ["merchant", "merchant"]


def test_a_current_event_decodes_straight_and_a_future_one_is_refused():
    event = msgspec.json.encode({"type": "payment.settled", "at": "2026-03-01T12:00:00Z", "amount_paid": 5})
    assert schema.event(event, schema.EVENTS.current).amount_paid == 5
    with pytest.raises(ValueError, match="schema version 9"):
        schema.event(event, 9)
