"""The B2B request signature: lowercase hex HMAC-SHA256 of METHOD\\nPATH\\nTIMESTAMP\\nBODY (pure), how long a
spent one is remembered, and the refusal of a repeat."""

from __future__ import annotations

import hashlib
import hmac

from common.config import Settings
from web.edge.errors import ApiError


def sign(secret_key: str, method: str, path: str, timestamp: str, body: bytes) -> str:
    message = f"{method.upper()}\n{path}\n{timestamp}\n".encode() + body
    return hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()


def matches(secret_key: str, method: str, path: str, timestamp: str, body: bytes, signature: str) -> bool:
    return hmac.compare_digest(sign(secret_key, method, path, timestamp, body), signature)


def replay_ttl(settings: Settings) -> int:
    """How long a signature is remembered: as long as its timestamp could pass the tolerance check."""
    return 2 * settings.signature_tolerance_s + 60


def replayed() -> ApiError:
    return ApiError(401, "signature_replayed", "This signature was already used; sign each request afresh.",
                    "X-Signature")
