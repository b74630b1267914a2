"""Verifying a webhook delivery (pure): the `sha256=` signature over TIMESTAMP.BODY, compared in constant time,
with the timestamp within a tolerance so a captured delivery cannot be replayed later."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping

from .errors import DecodeError, WebhookVerificationError
from .models import Event

DEFAULT_TOLERANCE_S = 300


def verify_webhook(payload: bytes, headers: Mapping[str, str], secret: str, tolerance: int = DEFAULT_TOLERANCE_S,
                   now: float | None = None) -> Event:
    """The event of a delivery whose signature and timestamp verify; raises WebhookVerificationError otherwise.
    `payload` is the raw body as received (not re-encoded JSON); `headers` any mapping of the request's headers;
    `secret` the endpoint's `whsec_...`. During a secret roll's overlap either secret verifies."""
    lower = {k.lower(): v for k, v in headers.items()}
    timestamp = lower.get("x-service-timestamp", "")
    if not timestamp.isdigit():
        raise WebhookVerificationError("missing or malformed X-Service-Timestamp header")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise WebhookVerificationError(f"timestamp more than {tolerance} s from now: refused as a possible replay")
    expected = "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + payload, hashlib.sha256).hexdigest()
    offered = [s.strip() for s in lower.get("x-service-signature", "").split(",")]
    # Every value is compared (no early exit), each in constant time.
    if not sum(hmac.compare_digest(expected.encode(), s.encode()) for s in offered):
        raise WebhookVerificationError("no signature matches this secret")
    try:
        return Event(json.loads(payload), "webhook event")
    except (ValueError, DecodeError) as exc:
        raise WebhookVerificationError(f"the signed body is not an event: {exc}") from exc


def standard_webhooks_secret(secret: str) -> str:
    """The endpoint secret in the form the `standardwebhooks` libraries take: `whsec_` + standard base64 of its
    bytes (secrets issued before the Standard Webhooks headers were url-safe base64 without padding)."""
    text = secret.removeprefix("whsec_").replace("-", "+").replace("_", "/")
    key = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    return "whsec_" + base64.b64encode(key).decode()
