"""What every handler reaches through the app: pools, the command bus, settings and the clock."""

from __future__ import annotations

from dataclasses import dataclass, field

import asyncpg
from aiohttp import web

from accounts.merchants import ApiKey
from actors.bus import CommandBus
from common.clock import Clock, utcnow
from common.clock_offset import ClockOffset
from common.config import Settings
from common.faults import NotStarted
from common.secrets import DerivedKeys, Vault
from streams.connection import Client
from streams.names import Keys
from web.edge.key_cache import KeyCache


@dataclass
class Context:
    settings: Settings
    pool: asyncpg.Pool
    redis: Client
    keys: Keys
    vault: Vault
    bus: CommandBus
    offset: ClockOffset
    clock: Clock = utcnow
    key_cache: KeyCache = field(default_factory=KeyCache)
    # Read from PostgreSQL once it answers: a web process started while it was away serves 503 until then.
    loaded: DerivedKeys | None = None

    @property
    def derived(self) -> DerivedKeys:
        if self.loaded is None:
            raise NotStarted("the web process has not reached PostgreSQL since it started")
        return self.loaded


CONTEXT: web.AppKey[Context] = web.AppKey("context", Context)
CALLER: web.RequestKey[ApiKey] = web.RequestKey("caller", ApiKey)
# Handlers whose signature is spent with their command (web/api/route.py), and such a request's signature.
ONE_COMMAND: web.AppKey[frozenset] = web.AppKey("one_command", frozenset)
UNSPENT_SIGNATURE: web.RequestKey[str] = web.RequestKey("unspent_signature", str)
SIGNED_AT_MS: web.RequestKey[int] = web.RequestKey("signed_at_ms", int)  # its X-Timestamp, in milliseconds
# The command a request sent: a dependency failing after it was sent is answered naming it (web/edge/errors.py).
COMMAND_ID: web.RequestKey[str] = web.RequestKey("command_id", str)
# A write whose signature was seen before but which carries an Idempotency-Key: only a recorded answer may serve it.
REPEATED_SIGNATURE: web.RequestKey[bool] = web.RequestKey("repeated_signature", bool)


def ctx(request: web.Request) -> Context:
    return request.app[CONTEXT]


def caller(request: web.Request) -> ApiKey:
    return request[CALLER]
