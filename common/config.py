"""One Settings struct read from the environment; it fails fast on a bad value."""

from __future__ import annotations

import os

import msgspec


class ConfigError(Exception):
    pass


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    database_url: str = ""
    # The role that owns the schema and runs the migrations; DATABASE_URL's role then owns nothing and may only add
    # to the audit log (docs/operations.md, Database roles). Unset: DATABASE_URL's role migrates as well.
    database_owner_url: str = ""
    # A statement of a long-running process unanswered this long fails as the database being away (common/db.py).
    database_timeout_s: float = 10.0
    redis_url: str = ""
    # Key prefix for every Redis key and stream, so several deployments or test runs share one server.
    redis_prefix: str = "svc:"
    port: int = 8080
    # Where a process without an HTTP port of its own serves /metrics, /healthz and /readyz; 0: nowhere.
    metrics_port: int = 0
    host: str = "127.0.0.1"
    base_url: str = ""
    checkout_url: str = ""
    dashboard_url: str = ""
    master_key: str = ""
    data_dir: str = ".service-data"
    partitions: int = 16
    lease_ttl_ms: int = 5000
    reply_timeout_s: float = 10.0
    session_ttl_s: int = 1800
    signature_tolerance_s: int = 300
    batch_size: int = 500
    actor_lanes: int = 4
    # How long acknowledged command and event entries stay on their streams, for replaying recent traffic.
    stream_retention_s: int = 86_400
    # Deliveries of a command on which the core raises before it goes to the dead-letter stream.
    command_max_deliveries: int = 5
    # How far a command's time may be from the time Redis appended it (and that from the worker's clock).
    command_max_skew_s: int = 300
    scheduler_interval_s: float = 1.0
    max_body_bytes: int = 1024 * 1024
    max_line_items: int = 100
    # Token buckets: per API key (a merchant may have its own, `service merchants limits`) and per client IP on
    # the hosted pages.
    rate_limit_rps: int = 100
    rate_limit_burst: int = 200
    page_rate_limit_rps: int = 20
    page_rate_limit_burst: int = 100
    # Where the card provider's API and its browser script live: Stripe's own unless pointed at a localstripe.
    stripe_api_base: str = "https://api.stripe.com"
    stripe_js_url: str = "https://js.stripe.com/v3/"
    # Mail to staff and buyers (invitations, notifications, receipts): `smtp://` or `smtps://user:pass@host:port`.
    # Without both, nothing is mailed and links are only shown (common/mail.py).
    smtp_url: str = ""
    mail_from: str = ""

    def migration_url(self) -> str:
        return self.database_owner_url or self.database_url

    def public_base(self) -> str:
        return self.base_url or f"http://{self.host}:{self.port}"

    def checkout_base(self) -> str:
        return self.checkout_url or self.public_base()


_ENV = {
    "database_url": "DATABASE_URL",
    "database_owner_url": "DATABASE_OWNER_URL",
    "database_timeout_s": "DATABASE_TIMEOUT_S",
    "redis_url": "REDIS_URL",
    "redis_prefix": "REDIS_PREFIX",
    "port": "PORT",
    "metrics_port": "METRICS_PORT",
    "host": "HOST",
    "base_url": "BASE_URL",
    "checkout_url": "CHECKOUT_URL",
    "dashboard_url": "DASHBOARD_URL",
    "master_key": "SERVICE_MASTER_KEY",
    "data_dir": "SERVICE_DATA_DIR",
    "partitions": "PARTITIONS",
    "lease_ttl_ms": "LEASE_TTL_MS",
    "reply_timeout_s": "REPLY_TIMEOUT_S",
    "session_ttl_s": "SESSION_TTL_S",
    "batch_size": "ACTOR_BATCH_SIZE",
    "actor_lanes": "ACTOR_LANES",
    "stream_retention_s": "STREAM_RETENTION_S",
    "command_max_deliveries": "COMMAND_MAX_DELIVERIES",
    "command_max_skew_s": "COMMAND_MAX_SKEW_S",
    "scheduler_interval_s": "SCHEDULER_INTERVAL_S",
    "max_body_bytes": "MAX_BODY_BYTES",
    "max_line_items": "MAX_LINE_ITEMS",
    "rate_limit_rps": "RATE_LIMIT_RPS",
    "rate_limit_burst": "RATE_LIMIT_BURST",
    "page_rate_limit_rps": "PAGE_RATE_LIMIT_RPS",
    "page_rate_limit_burst": "PAGE_RATE_LIMIT_BURST",
    "stripe_api_base": "STRIPE_API_BASE",
    "stripe_js_url": "STRIPE_JS_URL",
    "smtp_url": "SMTP_URL",
    "mail_from": "MAIL_FROM",
}


def load(environ: dict[str, str] | None = None, **overrides) -> Settings:
    env = os.environ if environ is None else environ
    raw = {field: env[name] for field, name in _ENV.items() if env.get(name)}
    raw.update(overrides)
    try:
        settings = msgspec.convert(raw, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"bad configuration: {exc}") from None
    if settings.partitions < 1:
        raise ConfigError("PARTITIONS must be at least 1")
    if settings.actor_lanes < 1:
        raise ConfigError("ACTOR_LANES must be at least 1")
    for name in ("command_max_deliveries", "command_max_skew_s", "max_body_bytes", "max_line_items", "rate_limit_rps", "rate_limit_burst", "page_rate_limit_rps",
                 "page_rate_limit_burst"):
        if getattr(settings, name) < 1:
            raise ConfigError(f"{_ENV[name]} must be at least 1")
    if settings.database_timeout_s <= 0:
        raise ConfigError("DATABASE_TIMEOUT_S must be positive")
    if settings.smtp_url and not settings.smtp_url.startswith(("smtp://", "smtps://")):
        raise ConfigError("SMTP_URL must start with smtp:// or smtps://")
    if bool(settings.smtp_url) != bool(settings.mail_from):
        raise ConfigError("SMTP_URL and MAIL_FROM are set together, or neither")
    if settings.stream_retention_s < 0:
        raise ConfigError("STREAM_RETENTION_S must not be negative")
    return settings
