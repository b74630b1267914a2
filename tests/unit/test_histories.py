"""Recorded histories (tests/histories/*.json): stored events must still rebuild the recorded order, and the
recorded commands must still decide the very same events. A failure means stored orders would change meaning."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from actors import messages as m
from actors.order import replay
from tests.histories.record import FLOWS, as_stored, record

HISTORIES = sorted((Path(__file__).resolve().parent.parent / "histories").glob("*.json"))


def _recorded(path: Path) -> dict:
    return json.loads(path.read_text())


def test_every_flow_has_its_recording():
    assert {path.stem for path in HISTORIES} == set(FLOWS)


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_stored_events_rebuild_the_recorded_order(path):
    recorded = _recorded(path)
    # Decoded from JSON bytes, as the event store hands them back.
    events = [msgspec.json.decode(json.dumps(e).encode(), type=m.Event) for e in recorded["events"]]
    assert as_stored(replay(events)) == recorded["state"]


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_recorded_commands_still_decide_the_recorded_events(path):
    assert record(FLOWS[path.stem]) == _recorded(path)
