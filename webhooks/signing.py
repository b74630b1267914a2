"""Webhook signatures (pure): the spec's `sha256=` header, and the Standard Webhooks headers beside it.

`sha256=` + lowercase hex HMAC-SHA256 keyed with the whole secret string, over `TIMESTAMP.BODY`.
Standard Webhooks (standardwebhooks.com): `v1,` + base64 HMAC-SHA256 keyed with the secret's bytes (the
base64 after `whsec_`), over `ID.TIMESTAMP.BODY`; the id is the event id, the same on every attempt.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets as random

SIGNATURE_HEADER = "X-Service-Signature"
TIMESTAMP_HEADER = "X-Service-Timestamp"
EVENT_ID_HEADER = "X-Service-Event-Id"
EVENT_TYPE_HEADER = "X-Service-Event-Type"
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
USER_AGENT = "Service-Webhooks/1"
SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """`whsec_` + standard base64 of 32 random bytes: the form the standardwebhooks libraries take as it is."""
    return SECRET_PREFIX + base64.b64encode(random.token_bytes(32)).decode()


def standard_key(secret: str) -> bytes:
    """The HMAC key of the Standard Webhooks signature. Secrets issued before those headers were url-safe
    base64 without padding; either alphabet decodes to the same bytes here."""
    text = secret.removeprefix(SECRET_PREFIX).replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except binascii.Error as exc:
        raise ValueError("a webhook secret is whsec_ followed by base64") from exc


def standard_secret(secret: str) -> str:
    """The secret in the form the standardwebhooks libraries take (`whsec_` + standard base64)."""
    return SECRET_PREFIX + base64.b64encode(standard_key(secret)).decode()


def sign(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def sign_standard(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(standard_key(secret), f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(secrets: list[str], timestamp: int, body: bytes) -> str:
    """One signature per valid secret, newest first: during a roll's overlap the old secret still verifies."""
    return ",".join(sign(secret, timestamp, body) for secret in secrets)


def standard_signature_header(secrets: list[str], message_id: str, timestamp: int, body: bytes) -> str:
    """Standard Webhooks separates the signatures of a roll's overlap with a space."""
    return " ".join(sign_standard(secret, message_id, timestamp, body) for secret in secrets)


def headers(secrets: list[str], timestamp: int, body: bytes, event_id: str, event_type: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_ID_HEADER: event_id,
        EVENT_TYPE_HEADER: event_type,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature_header(secrets, timestamp, body),
        STANDARD_ID_HEADER: event_id,
        STANDARD_TIMESTAMP_HEADER: str(timestamp),
        STANDARD_SIGNATURE_HEADER: standard_signature_header(secrets, event_id, timestamp, body),
    }
