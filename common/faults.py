"""A dependency out of reach (PostgreSQL, Redis: retried, a warning) told from a fault of this code (its traceback)."""

from __future__ import annotations

import logging

import asyncpg
from redis import exceptions as redis_errors

# The builtin ConnectionError and TimeoutError (asyncio's is the same class) are OSErrors.
UNAVAILABLE = (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError,
               redis_errors.ConnectionError, redis_errors.TimeoutError)


def report(log: logging.Logger, what: str, exc: BaseException, then: str) -> None:
    """Log a failure a loop survives. A dependency away is expected now and then and says only why; anything
    else is a bug that retrying will not cure, so it goes out at ERROR with its traceback for the on-call."""
    if isinstance(exc, UNAVAILABLE):
        log.warning("%s failed (%r); %s", what, exc, then)
    else:
        log.error("%s failed; %s", what, then, exc_info=exc)
