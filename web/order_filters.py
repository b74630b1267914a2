"""The orders filters the list, the dashboard and the exports share: status, creation time and paid time.

Times are ISO 8601; one without an offset is taken as UTC. `_gte` bounds are inclusive, `_lt` ones exclusive, so
consecutive ranges ([March 1, April 1), [April 1, May 1)) never count an order twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import NamedTuple

from actors.statuses import OrderStatus
from web.errors import ApiError

NAMES = ("status", "created_gte", "created_lt", "paid_gte", "paid_lt")
# A `+` of an offset sent unencoded in a query string arrives as a space.
_SPACED_OFFSET = re.compile(r"T(.*) (\d{2}(:?\d{2})?)$")


class OrderFilter(NamedTuple):
    status: str | None = None
    created_gte: datetime | None = None
    created_lt: datetime | None = None
    paid_gte: datetime | None = None
    paid_lt: datetime | None = None


def instant(text: str | None, param: str) -> datetime | None:
    """An ISO 8601 time from a query parameter (None when absent or empty), aware and in UTC."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(_SPACED_OFFSET.sub(r"T\1+\2", text.strip()))
    except ValueError:
        raise ApiError(422, "invalid_time", f"`{param}` must be an ISO 8601 time such as 2026-03-01T00:00:00Z.",
                       param) from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def parse(query: Mapping[str, str]) -> OrderFilter:
    status = query.get("status") or None
    if status is not None and status not in OrderStatus.__members__:
        raise ApiError(422, "invalid_status", f"`status` must be one of {', '.join(OrderStatus.__members__)}.",
                       "status")
    return OrderFilter(status, *(instant(query.get(name), name) for name in NAMES[1:]))


def where(first: int, table: str = "") -> str:
    """The filter as SQL over `orders` (aliased `table`), its five parameters numbered from `first` on."""
    col = f"{table}." if table else ""
    status, c_gte, c_lt, p_gte, p_lt = (f"${first + i}" for i in range(5))
    return (f" AND ({status}::text IS NULL OR {col}status = {status})"
            f" AND ({c_gte}::timestamptz IS NULL OR {col}created_at >= {c_gte})"
            f" AND ({c_lt}::timestamptz IS NULL OR {col}created_at < {c_lt})"
            f" AND ({p_gte}::timestamptz IS NULL OR {col}paid_at >= {p_gte})"
            f" AND ({p_lt}::timestamptz IS NULL OR {col}paid_at < {p_lt})")
