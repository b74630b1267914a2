"""Waiting on what the code under test does, not on the clock: a condition polled until it holds."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any


async def until(condition: Callable[[], Any | Awaitable[Any]], what: str, timeout: float = 15,
                every: float = 0.05) -> Any:
    """The first truthy value of `condition()` (a plain value or an awaitable); fails naming `what` when none
    comes within `timeout` seconds. The timeout bounds a broken run only: a passing one waits for the signal."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        assert loop.time() < deadline, f"not within {timeout} s: {what}"
        await asyncio.sleep(every)
