"""Every webhook payload, pinned: one sample per event type (tests/contract/events.json), made by the pure core.

An internal rename that changes what merchants receive fails here; a deliberate change of the contract re-records
with `python -m tests.contract.event_samples` and shows in review.
"""

from __future__ import annotations

import json
import typing

import msgspec
import pytest

from actors import messages as m
from contract import events as ev
from tests.contract.event_samples import SAMPLES, samples

PINNED = json.loads(SAMPLES.read_text())
EVENT_TYPES = sorted(cls.__struct_config__.tag for cls in typing.get_args(m.Event))


def test_every_event_type_has_a_pinned_sample_and_a_declared_shape():
    assert sorted(PINNED) == EVENT_TYPES == sorted(ev.BY_TYPE)


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_the_payload_is_the_pinned_one(event_type):
    assert samples()[event_type] == PINNED[event_type]


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_the_payload_has_its_declared_shape_and_no_external_ref(event_type):
    data = PINNED[event_type]["data"]
    msgspec.convert(data, ev.BY_TYPE[event_type], strict=True)  # raises on a field of the wrong type
    assert set(data) == set(ev.BY_TYPE[event_type].__struct_fields__)
    assert "external_ref" not in json.dumps(data) and "ERP-1" not in json.dumps(data)
