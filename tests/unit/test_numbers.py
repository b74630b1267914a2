"""Order numbers a worker holds: about a second of a busy merchant's creations, none for a quiet one, the smallest
handed out first and a number given back handed out again."""

from __future__ import annotations

from actors.numbers import NumberBlocks

BUSY, QUIET = ("mer_busy", False), ("mer_quiet", False)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_merchant_creating_at_the_rate_gets_a_second_of_numbers_and_a_quiet_one_none():
    clock = Clock()
    numbers = NumberBlocks(min_rate=50, max_block=1_000, clock=clock)
    numbers.note({BUSY: 30, QUIET: 3})
    numbers.note({BUSY: 30})
    assert numbers.wanted(BUSY) == 0  # nothing counted over a whole second yet
    clock.now = 101.2
    numbers.note({BUSY: 10})
    assert (numbers.wanted(BUSY), numbers.wanted(QUIET)) == (60, 0)


def test_the_block_is_capped_and_a_second_without_creations_forgets_the_rate():
    clock = Clock()
    numbers = NumberBlocks(min_rate=50, max_block=1_000, clock=clock)
    numbers.note({BUSY: 5_000})
    clock.now = 101.0
    numbers.note({})
    assert numbers.wanted(BUSY) == 1_000
    clock.now = 103.5  # a second went by with no batch at all
    numbers.note({})
    assert numbers.wanted(BUSY) == 0


def test_numbers_go_smallest_first_and_one_given_back_goes_next():
    numbers = NumberBlocks()
    numbers.add(BUSY, 1001, 1003)
    numbers.add(BUSY, 1010, 1011)
    assert numbers.covers({BUSY: 5}) and not numbers.covers({BUSY: 6}) and not numbers.covers({QUIET: 1})
    assert [numbers.take(BUSY), numbers.take(BUSY)] == [1001, 1002]
    numbers.give_back(BUSY, 1001)
    assert [numbers.take(BUSY) for _ in range(4)] == [1001, 1003, 1010, 1011]
    assert numbers.held(BUSY) == 0
