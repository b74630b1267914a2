"""Micro-USD (the order's unit) to the provider's cents and back, never through floats.

A charge is rounded up to the next cent: a buyer paying by card then always covers what the order owes, and the
order is PAID rather than short of a fraction of a cent (at most 0.009999 USD more is charged, and recorded as
paid). A refund sent to the provider must be a whole number of cents: a finer amount is refused, never rounded,
so the service never returns more or less than the merchant asked for.
"""

from __future__ import annotations

MICROS_PER_CENT = 10_000


class NotWholeCents(ValueError):
    pass


def charge_cents(micros: int) -> int:
    return -(-micros // MICROS_PER_CENT)


def refund_cents(micros: int) -> int:
    if micros % MICROS_PER_CENT:
        raise NotWholeCents("card refunds are whole cents: at most 2 decimal places")
    return micros // MICROS_PER_CENT


def micros(cents: int) -> int:
    return cents * MICROS_PER_CENT
