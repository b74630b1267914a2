"""Decimal amount strings to token base units and back: exact at 6 and 18 decimals, never through floats."""

from __future__ import annotations

import pytest

from common.money import InvalidAmount, from_base_units, to_base_units

TO_UNITS = [
    ("12.5", 6, 12_500_000),
    ("0.000001", 6, 1),
    ("10.000000", 6, 10_000_000),  # trailing zeros beyond the value are fine
    ("1.10", 18, 1_100_000_000_000_000_000),  # USDT on BSC
    ("0.1", 18, 100_000_000_000_000_000),  # a float would give 100000000000000005551
    ("999999999999.999999", 6, 999_999_999_999_999_999),
    ("12345678901234567890.123456789012345678", 18, 12_345_678_901_234_567_890_123_456_789_012_345_678),
    ("0", 6, 0),
    ("7", 0, 7),
]


@pytest.mark.parametrize(("amount", "decimals", "units"), TO_UNITS)
def test_to_base_units(amount: str, decimals: int, units: int) -> None:
    assert to_base_units(amount, decimals) == units


@pytest.mark.parametrize(
    ("amount", "decimals"),
    [("0.0000001", 6), ("-1", 6), ("1e3", 6), (".5", 6), ("5.", 6), ("1,5", 6), (" 1", 6), ("", 6), ("NaN", 6),
     ("+1", 6), ("0.5", 0)],
)
def test_to_base_units_refuses(amount: str, decimals: int) -> None:
    with pytest.raises(InvalidAmount):
        to_base_units(amount, decimals)


@pytest.mark.parametrize(
    ("units", "decimals", "amount"),
    [(12_500_000, 6, "12.5"), (1, 6, "0.000001"), (10_000_000, 6, "10"), (0, 6, "0"), (1, 18, "0.000000000000000001"),
     (1_100_000_000_000_000_000, 18, "1.1"), (7, 0, "7")],
)
def test_from_base_units(units: int, decimals: int, amount: str) -> None:
    assert from_base_units(units, decimals) == amount
    assert to_base_units(amount, decimals) == units


def test_from_base_units_refuses_negative() -> None:
    with pytest.raises(InvalidAmount):
        from_base_units(-1, 6)
