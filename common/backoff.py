"""Exponential backoff with jitter (pure), for every retry loop: webhook deliveries and chain RPC calls."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")  # seconds as a float, or a timedelta
Jitter = Callable[[], float]


def uniform_jitter() -> float:
    """A factor in [0.8, 1.2): spreads the retries of many callers that failed together."""
    return random.uniform(0.8, 1.2)


def exponential(failures: int, first: T, longest: T, jitter: Jitter = uniform_jitter) -> T:
    """The wait after the n-th failure in a row: first, 2 * first, 4 * first, ... capped at longest, times jitter."""
    return min(first * 2 ** (failures - 1), longest) * jitter()
