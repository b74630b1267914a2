"""A receipt's address: `{checkout origin}/receipts/{receipt_key}`, its key derived from the order id.

The key is the order id and an HMAC of it under the service's receipts key: unguessable without that key, like a
session key, and the page finds its order from the key alone. The address is made once, by the web when the order
is made; the order keeps it (`receipt_url`) and every reader shows that one.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from common.config import Settings

PREFIX = "rcpt_"
_MAC_HEX = 32  # 128 bits
_SHAPE = re.compile(rf"{PREFIX}([0-9a-f]{{{_MAC_HEX}}})_(ord_[A-Za-z0-9_-]{{1,100}})")


def _mac(key: bytes, order_id: str) -> str:
    return hmac.new(key, f"receipt\x00{order_id}".encode(), hashlib.sha256).hexdigest()[:_MAC_HEX]


def receipt_key(key: bytes, order_id: str) -> str:
    return f"{PREFIX}{_mac(key, order_id)}_{order_id}"


def order_id_of(key: bytes, receipt_key_: str) -> str | None:
    """The order a receipt key names, or None for a key the service did not make."""
    found = _SHAPE.fullmatch(receipt_key_)
    if found is None or not hmac.compare_digest(found[1], _mac(key, found[2])):
        return None
    return found[2]


def receipt_path(key: bytes, order_id: str) -> str:
    return f"/receipts/{receipt_key(key, order_id)}"


def receipt_url(settings: Settings, key: bytes, order_id: str) -> str:
    return settings.checkout_base() + receipt_path(key, order_id)

