"""The limits an order's values must keep: the API validates bodies against them, the order core refuses any
command that breaks them, whoever wrote it to the stream. One module, so the two can never drift apart.
Imports nothing of the project."""

from __future__ import annotations

import re
from datetime import datetime, timezone

# Micro-USD: the API reads at most 12 integer digits, and PostgreSQL's bigint holds every sum of those.
MAX_AMOUNT = 10**18 - 1
MAX_QUANTITY = 1_000_000
# The most line items a body may carry; MAX_LINE_ITEMS (config, default 100) is what an order is allowed.
MAX_LINE_ITEMS = 10_000
MAX_NAME = 255  # a line item's name, external_ref, a refund-request reference
MAX_TEXT = 1000  # reasons and notes
METADATA_KEYS, METADATA_KEY, METADATA_VALUE = 50, 40, 500
MAX_URL = 2048
MAX_EMAIL = 254  # RFC 5321's longest path
# A buyer's address for receipts: one @, a dot in the domain, nothing a mail header or a page could misread.
EMAIL = re.compile(r"[^@\s<>()\[\],;:\\\"]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
SESSION_TTL_MIN_S = 1
SESSION_TTL_MAX_S = 7 * 86400

# Ids: the object's prefix, `_`, then letters, digits, `_` or `-`.
ID_PREFIXES = {
    "order_id": "ord", "merchant_id": "mer", "session_id": "cs", "refund_id": "re", "link_token": "rl",
    "token": "rfqt", "new_token": "rfqt", "payment_id": "pay", "payment_link_id": "plink",
}
_ID_BODY = r"_[A-Za-z0-9_-]{1,100}"
ID_SHAPES = {field: re.compile(prefix + _ID_BODY) for field, prefix in ID_PREFIXES.items()}
SESSION_KEY_SHAPES = {False: re.compile("cs_test" + _ID_BODY), True: re.compile("cs_live" + _ID_BODY)}

# Times the service can have made: its clock is UTC, and nothing it records predates it or lies centuries ahead.
EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2200, 1, 1, tzinfo=timezone.utc)


def is_utc(at: datetime) -> bool:
    return at.tzinfo is not None and at.utcoffset().total_seconds() == 0 and EARLIEST <= at < LATEST
