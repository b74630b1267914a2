"""A dependency out of reach (PostgreSQL, Redis: retried, a warning) told from a fault of this code (its traceback).

A dependency's fault is the machine's, not ours: the on-call reads ERROR as "our bug", so a fault of PostgreSQL or
Redis is one WARNING per episode naming the dependency, and a count in `dependency_faults_total`; the calls that
fail during the episode are counted, not logged, each."""

from __future__ import annotations

import logging
import time

import asyncpg
from redis import exceptions as redis_errors

from common import metrics


# The builtin ConnectionError and TimeoutError (asyncio's is the same class) are OSErrors. PostgreSQL moving to
# another host (a failover, a switchover) shows as more than a refused connection: a pooled connection that died
# mid-query leaves asyncpg's protocol in a state it reports as an InternalClientError ("cannot switch to state 15";
# also the class of "no host of DATABASE_URL is the primary"), a server shutting down or not yet accepting says so
# with SQLSTATE 57P01-57P03, and a server demoted under a connection refuses its writes as read-only (25006).
class NotStarted(ConnectionError):
    """The process started while PostgreSQL or Redis was away and has not reached them yet (common/lifecycle.py)."""


# The machine under PostgreSQL short of something (SQLSTATE class 53: disk full, out of memory, too many
# connections) or failing at its files (class 58: an I/O error): the statement was refused whole, and the same
# command passes once the machine is fixed, so it is retried as after a lost connection, never set aside.
MACHINE = (asyncpg.InsufficientResourcesError, asyncpg.PostgresSystemError)

UNAVAILABLE = (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError, asyncpg.InternalClientError,
               asyncpg.AdminShutdownError, asyncpg.CrashShutdownError, asyncpg.CannotConnectNowError,
               asyncpg.ReadOnlySQLTransactionError, *MACHINE, redis_errors.ConnectionError, redis_errors.TimeoutError)
# What a reader of the events stream that writes to PostgreSQL waits out (streams/reader.py): a dependency away, or a
# statement PostgreSQL refused; either way its batch stays unacknowledged and is read again.
READING = (*UNAVAILABLE, asyncpg.PostgresError)

# Faults of one dependency no further apart than this are one episode: one WARNING at its start.
EPISODE_GAP_S = 30.0
_last_fault: dict[str, float] = {}


def dependency_of(exc: BaseException) -> str:
    """`redis` or `postgresql`: by the error's class, or, for an OSError (a refused connection, a timeout), by the
    library whose code raised it."""
    if isinstance(exc, redis_errors.RedisError):
        return "redis"
    if isinstance(exc, (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)):
        return "postgresql"
    modules = []
    tb = exc.__traceback__
    while tb is not None:
        modules.append(tb.tb_frame.f_globals.get("__name__", ""))
        tb = tb.tb_next
    for module in reversed(modules):  # the innermost library frame knows best
        if module.startswith("redis"):
            return "redis"
        if module.startswith("asyncpg"):
            return "postgresql"
    return "postgresql or redis"


def unavailable(log: logging.Logger, what: str, exc: BaseException, then: str) -> None:
    """A dependency fault: counted always, logged as a WARNING when it starts an episode of its dependency."""
    dependency = dependency_of(exc)
    metrics.DEPENDENCY_FAULTS.labels(dependency).inc()
    now = time.monotonic()
    last = _last_fault.get(dependency)
    _last_fault[dependency] = now
    if last is not None and now - last <= EPISODE_GAP_S:
        return
    metrics.DEPENDENCY_FAULT_EPISODES.labels(dependency).inc()
    log.warning("%s failed: %s unavailable (%r); %s. Further faults of %s are counted in dependency_faults_total,"
                " not logged, until it has gone %g s without one", what, dependency, exc, then, dependency,
                EPISODE_GAP_S)


def report(log: logging.Logger, what: str, exc: BaseException, then: str) -> None:
    """Log a failure a loop survives. A dependency away is expected now and then and says only why, once an
    episode; anything else is a bug that retrying will not cure, so it goes out at ERROR with its traceback."""
    if isinstance(exc, UNAVAILABLE):
        unavailable(log, what, exc, then)
    else:
        log.error("%s failed; %s", what, then, exc_info=exc)
