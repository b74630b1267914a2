"""Exact conversion between decimal amount strings (1 token = 1 USD) and a token's integer base units."""

import re

_DECIMAL = re.compile(r"(\d+)(?:\.(\d+))?")


class InvalidAmount(ValueError):
    """An amount string is not a plain non-negative decimal, or is finer than the token allows."""


def to_base_units(amount: str, decimals: int) -> int:
    """'12.5' with 6 decimals -> 12500000. Pure string and int arithmetic, so no float or Decimal context rounds."""
    match = _DECIMAL.fullmatch(amount)
    if match is None:
        raise InvalidAmount(f"{amount!r} is not a plain decimal such as '12.50'")
    whole, fraction = match.group(1), match.group(2) or ""
    if len(fraction.rstrip("0")) > decimals:
        raise InvalidAmount(f"{amount!r} has more than {decimals} fractional digits")
    fraction = fraction[:decimals].ljust(decimals, "0")
    return int(whole + fraction)


def from_base_units(units: int, decimals: int) -> str:
    """12500000 with 6 decimals -> '12.5': the shortest exact decimal string."""
    if units < 0:
        raise InvalidAmount(f"{units} is negative")
    digits = str(units).rjust(decimals + 1, "0")
    whole, fraction = digits[: len(digits) - decimals], digits[len(digits) - decimals :].rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole
