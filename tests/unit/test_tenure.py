"""What a worker's lanes may act on (actors/tenure.py): a lapse cancels the reads in flight, a read is applied only
under the epoch it was made under, and a refused commit drops only partitions still held under the refused epoch."""

from __future__ import annotations

import asyncio

import pytest

from actors.fencing import Fenced
from actors.tenure import Lapsed, Tenure


async def test_a_lapse_cancels_a_read_in_flight_and_serves_nothing():
    tenure = Tenure("w1")
    tenure.serve({1: 3, 2: 3})
    never_answered = asyncio.get_running_loop().create_future()
    reading = asyncio.create_task(tenure.read(never_answered))
    await asyncio.sleep(0)
    tenure.lapse()
    with pytest.raises(Lapsed):
        await reading
    assert never_answered.cancelled() and tenure.serving == set()


async def test_a_read_outside_a_lapse_is_cancelled_as_its_reader_is():
    tenure = Tenure("w1")
    reading = asyncio.create_task(tenure.read(asyncio.get_running_loop().create_future()))
    await asyncio.sleep(0)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading


# Each row: what happened between the read and its return; the partitions whose entries are applied.
@pytest.mark.parametrize("meanwhile,applied", [
    pytest.param(lambda t: None, {1, 2}, id="nothing"),
    pytest.param(lambda t: t.lapse(), set(), id="a-lapse"),
    pytest.param(lambda t: (t.lapse(), t.serve({1: 4})), set(), id="a-lapse-and-the-lease-taken-anew"),
    pytest.param(lambda t: t.serving.discard(2), {1}, id="a-partition-lost"),
])
def test_a_read_is_applied_only_under_the_epoch_it_was_made_under(meanwhile, applied):
    tenure = Tenure("w1")
    tenure.serve({1: 3, 2: 3})
    held = tenure.held({1, 2})
    meanwhile(tenure)
    assert tenure.still_held(held) == applied


def test_a_refused_commit_drops_the_partitions_still_held_under_the_refused_epoch():
    tenure = Tenure("w1")
    tenure.serve({1: 3, 2: 4})  # 2 was taken anew, under a newer epoch of its own, since the batch was read
    tenure.refused(Fenced({1, 2}), {1: 3, 2: 2})
    assert tenure.serving == {2} and tenure.fenced == {1: 3}
