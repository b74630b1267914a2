"""Webhook signatures (pure): `sha256=` + lowercase hex HMAC-SHA256 with the endpoint secret over `TIMESTAMP.BODY`."""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Service-Signature"
TIMESTAMP_HEADER = "X-Service-Timestamp"
EVENT_ID_HEADER = "X-Service-Event-Id"
EVENT_TYPE_HEADER = "X-Service-Event-Type"
USER_AGENT = "Service-Webhooks/1"


def sign(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signature_header(secrets: list[str], timestamp: int, body: bytes) -> str:
    """One signature per valid secret, newest first: during a roll's overlap the old secret still verifies."""
    return ",".join(sign(secret, timestamp, body) for secret in secrets)


def headers(secrets: list[str], timestamp: int, body: bytes, event_id: str, event_type: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_ID_HEADER: event_id,
        EVENT_TYPE_HEADER: event_type,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature_header(secrets, timestamp, body),
    }
