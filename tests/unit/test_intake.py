"""Intake refusals of the live runtime: one row per rule, and the edges of the skew window."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from actors import intake
from actors import messages as m

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


def _entry(at: datetime) -> bytes:
    return b"%d-0" % int(at.timestamp() * 1000)


def _envelope(at: datetime) -> m.Envelope:
    return m.Envelope(command_id="cmd_1", command=m.CancelOrder(order_id="ord_1", merchant_id="mer_1",
                                                               livemode=False, at=at))


@pytest.mark.parametrize(("at", "appended", "found_on", "belongs_to", "reason", "reader_clock"), [
    (NOW, NOW, 3, 3, None, False),
    (NOW - timedelta(seconds=300), NOW, 3, 3, None, False),  # at the window's edge
    (NOW - timedelta(seconds=301), NOW, 3, 3, "command_skew: `command.at` is 301 s behind", False),
    (NOW + timedelta(seconds=301), NOW, 3, 3, "command_skew: `command.at` is 301 s ahead of", False),
    # queued during an outage: old by the worker's clock, not by its entry's
    (NOW - timedelta(hours=2), NOW - timedelta(hours=2), 3, 3, None, False),
    # a made-up entry id, or the worker's own clock behind: the worker checks its clock before setting it aside
    (NOW + timedelta(hours=2), NOW + timedelta(hours=2), 3, 3, "command_skew: the entry id is 7200 s ahead of", True),
    (NOW, NOW, 2, 3, "wrong_partition: the order's commands belong on partition 3, not 2", False),
    (NOW.replace(tzinfo=None), NOW, 3, 3, None, False),  # the core refuses a naive time, naming the field
])
def test_intake_refusals(at, appended, found_on, belongs_to, reason, reader_clock):
    found = intake.refusal(_envelope(at), _entry(appended), found_on, belongs_to, NOW, 300)
    if reason is None:
        assert found is None
    else:
        assert found.reason.startswith(reason)
        assert found.reader_clock is reader_clock
