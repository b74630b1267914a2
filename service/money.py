"""USD amounts: decimal strings on the wire, integer micro-dollars (6 decimals) inside."""

from __future__ import annotations

import re

from service import bounds

SCALE = 10**6
_AMOUNT = re.compile(r"^(0|[1-9][0-9]{0,11})(\.([0-9]{1,6}))?$")


class AmountError(ValueError):
    pass


def parse(text: object) -> int:
    """Micro-dollars of a positive decimal string with at most 6 fractional digits."""
    if not isinstance(text, str):
        raise AmountError("must be a decimal string such as \"10.50\"")
    match = _AMOUNT.match(text)
    if match is None:
        if re.fullmatch(r"[0-9]+\.[0-9]{7,}", text):
            raise AmountError("has more than 6 decimal places")
        raise AmountError("must be a positive decimal string such as \"10.50\"")
    whole, fraction = match.group(1), match.group(3) or ""
    micros = int(whole) * SCALE + int(fraction.ljust(6, "0"))
    if micros <= 0:
        raise AmountError("must be greater than zero")
    if micros > bounds.MAX_AMOUNT:
        raise AmountError(f"must be at most {format(bounds.MAX_AMOUNT)}")
    return micros


def format(micros: int) -> str:
    """Decimal string with at least two fractional digits: 10500000 -> "10.50"."""
    sign = "-" if micros < 0 else ""
    whole, fraction = divmod(abs(micros), SCALE)
    digits = f"{fraction:06d}".rstrip("0").ljust(2, "0")
    return f"{sign}{whole}.{digits}"
