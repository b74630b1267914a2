"""Times a request names (list filters, export ranges, cursors): ISO 8601, read in UTC and held to the years the
service can have recorded anything in (common.order_limits), so that no bound a client may send (`0001-01-01`,
`9999-12-31`, a far-future time with an offset) becomes a time Python or the database driver cannot convert."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from common import order_limits
from web.edge.errors import ApiError

# A `+` of an offset sent unencoded in a query string arrives as a space.
_SPACED_OFFSET = re.compile(r"T(.*) (\d{2}(:?\d{2})?)$")


def within_records(at: datetime) -> datetime:
    """`at` in UTC, moved to the nearest end of the span the service records times in: every stored time lies in
    that span, so a filter bound beyond it selects exactly what the span's end does."""
    aware = at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
    return max(order_limits.EARLIEST, min(order_limits.LATEST, aware)).astimezone(timezone.utc)


def instant(text: str | None, param: str) -> datetime | None:
    """An ISO 8601 time or date from a query parameter (None when absent or empty); one without an offset is UTC,
    a date is its midnight."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(_SPACED_OFFSET.sub(r"T\1+\2", text.strip()))
    except ValueError:
        raise ApiError(422, "invalid_time", f"`{param}` must be an ISO 8601 time such as 2026-03-01T00:00:00Z.",
                       param) from None
    return within_records(moment)
