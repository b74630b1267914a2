"""A dependency out of reach (PostgreSQL, Redis: retried, a warning) told from a fault of this code (its traceback)."""

from __future__ import annotations

import logging

import asyncpg
from redis import exceptions as redis_errors

# The builtin ConnectionError and TimeoutError (asyncio's is the same class) are OSErrors. PostgreSQL moving to
# another host (a failover, a switchover) shows as more than a refused connection: a pooled connection that died
# mid-query leaves asyncpg's protocol in a state it reports as an InternalClientError ("cannot switch to state 15";
# also the class of "no host of DATABASE_URL is the primary"), a server shutting down or not yet accepting says so
# with SQLSTATE 57P01-57P03, and a server demoted under a connection refuses its writes as read-only (25006).
class NotStarted(ConnectionError):
    """The process started while PostgreSQL or Redis was away and has not reached them yet (common/wiring.py)."""


UNAVAILABLE = (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError, asyncpg.InternalClientError,
               asyncpg.AdminShutdownError, asyncpg.CrashShutdownError, asyncpg.CannotConnectNowError,
               asyncpg.ReadOnlySQLTransactionError, redis_errors.ConnectionError, redis_errors.TimeoutError)


def report(log: logging.Logger, what: str, exc: BaseException, then: str) -> None:
    """Log a failure a loop survives. A dependency away is expected now and then and says only why; anything
    else is a bug that retrying will not cure, so it goes out at ERROR with its traceback for the on-call."""
    if isinstance(exc, UNAVAILABLE):
        log.warning("%s failed (%r); %s", what, exc, then)
    else:
        log.error("%s failed; %s", what, then, exc_info=exc)
