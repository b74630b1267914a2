"""The orders filters the list, the dashboard and the exports share: status, creation time and paid time.

Times are ISO 8601; one without an offset is taken as UTC. `_gte` bounds are inclusive, `_lt` ones exclusive, so
consecutive ranges ([March 1, April 1), [April 1, May 1)) never count an order twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import NamedTuple

from actors.statuses import OrderStatus
from web.edge.errors import ApiError
from web.reads.instants import instant

NAMES = ("status", "created_gte", "created_lt", "paid_gte", "paid_lt")


class OrderFilter(NamedTuple):
    status: str | None = None
    created_gte: datetime | None = None
    created_lt: datetime | None = None
    paid_gte: datetime | None = None
    paid_lt: datetime | None = None


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
