"""The dispatcher's knobs, read from WEBHOOK_* environment variables (defaults are the documented policy)."""

from __future__ import annotations

import os

import msgspec


class WebhookSettings(msgspec.Struct, frozen=True, kw_only=True):
    timeout_s: float = 10.0
    # A delivery a dispatcher holds (queued, in flight) is leased this long and renewed three times a lease,
    # so what a dispatcher that died held comes due again within one lease.
    lease_s: float = 5.0
    per_endpoint: int = 16          # concurrent attempts to one endpoint; others' lanes are separate
    batch: int = 500                # stream entries read, due deliveries claimed, outcomes written at once
    sweep_interval_s: float = 1.0
    # Stream entries another consumer left unacknowledged this long are taken over (a live one acknowledges its
    # batch as soon as its deliveries are written; taking one twice adds no delivery).
    reclaim_idle_ms: int = 5_000


_ENV = {
    "timeout_s": "WEBHOOK_TIMEOUT_S",
    "lease_s": "WEBHOOK_LEASE_S",
    "per_endpoint": "WEBHOOK_PER_ENDPOINT",
    "batch": "WEBHOOK_BATCH",
    "sweep_interval_s": "WEBHOOK_SWEEP_INTERVAL_S",
    "reclaim_idle_ms": "WEBHOOK_RECLAIM_IDLE_MS",
}


def load(environ: dict[str, str] | None = None) -> WebhookSettings:
    env = os.environ if environ is None else environ
    raw = {field: env[name] for field, name in _ENV.items() if env.get(name)}
    return msgspec.convert(raw, WebhookSettings, strict=False)
