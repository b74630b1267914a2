"""The B2B request signature: lowercase hex HMAC-SHA256 with the secret key over METHOD\\nPATH\\nTIMESTAMP\\nBODY."""

from __future__ import annotations

import hashlib
import hmac


def signed_headers(public_key: str, secret_key: str, method: str, path: str, body: bytes, timestamp: int) -> dict:
    """PATH is the path with its query string exactly as sent; BODY the exact bytes (empty for a GET)."""
    message = f"{method}\n{path}\n{timestamp}\n".encode() + body
    signature = hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()
    return {"X-Client-ID": public_key, "X-Timestamp": str(timestamp), "X-Signature": signature}
