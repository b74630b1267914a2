"""The clock's offset from Redis's TIME: measured at the round trip's midpoint, within or beyond the bound, and
each change said once in the log."""

from __future__ import annotations

import logging

import pytest

from common.clock_offset import ClockOffset, bound_s

REDIS_NOW = 1_800_000_000.25


class FrozenRedis:
    async def time(self) -> tuple[int, int]:
        return int(REDIS_NOW), int(round(REDIS_NOW % 1 * 1_000_000))


class Ticking:
    """A local clock `offset` seconds from Redis's, whose every reading moves on by `step` (the round trip)."""

    def __init__(self, offset: float, step: float = 0.002) -> None:
        self.now, self.step = REDIS_NOW + offset - step / 2, step

    def __call__(self) -> float:
        reading, self.now = self.now, self.now + self.step
        return reading


def test_the_bound_is_a_tenth_of_command_max_skew():
    assert bound_s(300) == 30


@pytest.mark.parametrize(("offset", "within", "verdict"), [
    (0.0, True, "ok"),
    (29.9, True, "ok"),
    (-29.9, True, "ok"),
    (30.5, False, "clock 30.5 s ahead of Redis's TIME, beyond 30 s"),
    (-600.0, False, "clock 600.0 s behind Redis's TIME, beyond 30 s"),
])
async def test_a_measurement_says_whether_the_clock_is_within_the_bound(offset, within, verdict):
    clock = ClockOffset(FrozenRedis(), "actors", 30, clock=Ticking(offset))
    assert await clock.check() is within
    assert clock.offset_s == pytest.approx(offset, abs=1e-3)
    assert clock.verdict() == verdict


async def test_going_off_and_coming_back_are_each_said_once(caplog):
    local = Ticking(-600.0)
    clock = ClockOffset(FrozenRedis(), "actors", 30, clock=local)
    with caplog.at_level(logging.WARNING, logger="common.clock_offset"):
        for _ in range(3):
            await clock.check()
        local.now += 600.0
        for _ in range(3):
            await clock.check()
    assert [r.getMessage() for r in caplog.records] == [
        "actors: the clock is 600.0 s behind Redis's TIME, beyond 30 s: taking no work until it is within (check NTP)",
        "actors: the clock is back within 30 s of Redis's (0.0 s ahead of Redis's TIME); taking work again",
    ]


async def test_shared_time_is_the_local_clock_corrected_by_the_offset():
    clock = ClockOffset(FrozenRedis(), "web", 30, clock=Ticking(-600.0, step=0.0))
    await clock.check()
    assert clock.shared_ms() == int(REDIS_NOW * 1000)
