"""USD amounts: decimal strings on the wire, integer micro-dollars (6 decimals) inside; and token amounts in
base units. One exact decimal parser serves both, never through floats."""

from __future__ import annotations

import re

from common import order_limits

SCALE = 10**6
_AMOUNT = re.compile(r"^(0|[1-9][0-9]{0,11})(\.([0-9]{1,6}))?$")


class AmountError(ValueError):
    pass


# Token amounts: 1 token = 1 USD, a token's base units at its own decimals (6 for most USDC, 18 for BSC's USDT).
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


def parse(text: object) -> int:
    """Micro-dollars of a positive decimal string with at most 6 fractional digits."""
    if not isinstance(text, str):
        raise AmountError("must be a decimal string such as \"10.50\"")
    match = _AMOUNT.match(text)
    if match is None:
        if re.fullmatch(r"[0-9]+\.[0-9]{7,}", text):
            raise AmountError("has more than 6 decimal places")
        raise AmountError("must be a positive decimal string such as \"10.50\"")
    micros = to_base_units(text, 6)
    if micros <= 0:
        raise AmountError("must be greater than zero")
    if micros > order_limits.MAX_AMOUNT:
        raise AmountError(f"must be at most {format(order_limits.MAX_AMOUNT)}")
    return micros


def format(micros: int) -> str:
    """Decimal string with at least two fractional digits: 10500000 -> "10.50"."""
    sign = "-" if micros < 0 else ""
    whole, fraction = divmod(abs(micros), SCALE)
    digits = f"{fraction:06d}".rstrip("0").ljust(2, "0")
    return f"{sign}{whole}.{digits}"
