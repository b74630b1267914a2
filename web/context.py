"""What every handler reaches through the app: pools, the command bus, settings and the clock."""

from __future__ import annotations

from dataclasses import dataclass, field

import asyncpg
import redis.asyncio as aioredis
from aiohttp import web

from service.clock import Clock, utcnow
from service.config import Settings
from service.merchants import ApiKey
from service.secrets import Vault
from streams.names import Keys
from streams.producer import CommandBus


@dataclass
class Context:
    settings: Settings
    pool: asyncpg.Pool
    redis: aioredis.Redis
    keys: Keys
    vault: Vault
    bus: CommandBus
    vault_key: bytes = b""
    clock: Clock = utcnow
    key_cache: dict[str, tuple[float, ApiKey | None]] = field(default_factory=dict)


CONTEXT: web.AppKey[Context] = web.AppKey("context", Context)
CALLER: web.RequestKey[ApiKey] = web.RequestKey("caller", ApiKey)
# Handlers whose signature is spent with their command (web/route.py), and such a request's signature.
ONE_COMMAND: web.AppKey[frozenset] = web.AppKey("one_command", frozenset)
UNSPENT_SIGNATURE: web.RequestKey[str] = web.RequestKey("unspent_signature", str)


def ctx(request: web.Request) -> Context:
    return request.app[CONTEXT]


def caller(request: web.Request) -> ApiKey:
    return request[CALLER]
