"""The B2B request signature: lowercase hex HMAC-SHA256 of METHOD\\nPATH\\nTIMESTAMP\\nBODY (pure)."""

from __future__ import annotations

import hashlib
import hmac


def sign(secret_key: str, method: str, path: str, timestamp: str, body: bytes) -> str:
    message = f"{method.upper()}\n{path}\n{timestamp}\n".encode() + body
    return hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()


def matches(secret_key: str, method: str, path: str, timestamp: str, body: bytes, signature: str) -> bool:
    return hmac.compare_digest(sign(secret_key, method, path, timestamp, body), signature)
