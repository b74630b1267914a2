"""Cursor pagination of list calls: query checks, `limit` 1..100, an opaque (created_at, id) cursor."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import TypeVar

from aiohttp import web

from web.edge.errors import ApiError
from web.reads.instants import within_records

L = TypeVar("L")


def cursor(created_at: datetime, object_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{object_id}".encode()).decode()


def parse_cursor(text: str) -> tuple[datetime, str]:
    try:
        stamp, object_id = base64.urlsafe_b64decode(text.encode()).decode().split("|", 1)
        return within_records(datetime.fromisoformat(stamp)), object_id
    except (ValueError, UnicodeDecodeError):
        raise ApiError(422, "invalid_cursor", "`cursor` is not a cursor this API returned.", "cursor") from None


class Page:
    """The filters, limit and position a list call asked for; unknown parameters are refused."""

    def __init__(self, request: web.Request, filters: tuple[str, ...]):
        query = request.query
        unknown = sorted(set(query) - {"limit", "cursor", *filters})
        if unknown:
            raise ApiError(422, "unknown_parameter", f"Unknown query parameter `{unknown[0]}`.", unknown[0])
        text = query.get("limit", "20")
        if not text.isdigit() or not 1 <= int(text) <= 100:
            raise ApiError(422, "invalid_limit", "`limit` must be an integer from 1 to 100.", "limit")
        self.limit = int(text)
        self.filters = {name: query.get(name) for name in filters}
        self.before = parse_cursor(query["cursor"]) if "cursor" in query else None

    def answer(self, shape: type[L], data: list, rows: list, position) -> L:
        """The list answer (a contract.page_of shape) for rows fetched with limit + 1; position(row) is its
        (created_at, id)."""
        more = len(rows) > self.limit
        return shape(data=data[: self.limit], has_more=more,
                     next_cursor=cursor(*position(rows[self.limit - 1])) if more else None)
