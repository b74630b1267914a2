"""The rows of an export, read through a server-side cursor in one read-only snapshot: memory stays flat whatever
the range, and the file is consistent even while orders change beneath it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from datetime import datetime
from typing import NamedTuple

import asyncpg

from actors.views import stored_view
from web import order_filters
from web.exports import rows
from web.order_filters import OrderFilter

PAGE = 500  # rows fetched from the cursor at a time

_OWN = "merchant_id = $1 AND livemode = $2"
# Orders by creation time. Payments: of the orders that may hold one confirmed in the range (created before its end,
# changed since its start), each order's in the order they came. Refunds by their creation time.
_SQL = {
    "orders": "SELECT state, state_schema, paid_at FROM orders WHERE " + _OWN +
              " AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)"
              f"{order_filters.where(5)} ORDER BY created_at, order_id",
    "payments": "SELECT state, state_schema FROM orders WHERE " + _OWN +
                " AND ($3::timestamptz IS NULL OR updated_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)"
                f"{order_filters.where(5)} ORDER BY created_at, order_id",
    "refunds": "SELECT o.state, o.state_schema, r.refund_id FROM refunds r JOIN orders o USING (order_id)"
               " WHERE r.merchant_id = $1 AND r.livemode = $2"
               " AND ($3::timestamptz IS NULL OR r.created_at >= $3) AND ($4::timestamptz IS NULL OR r.created_at < $4)"
               f"{order_filters.where(5, 'o')} ORDER BY r.created_at, r.refund_id",
}
KINDS = tuple(_SQL)


class Export(NamedTuple):
    kind: str  # orders, payments or refunds
    merchant_id: str
    livemode: bool
    start: datetime | None  # `from`, inclusive
    end: datetime | None  # `to`, exclusive
    filters: OrderFilter


def _mapped(export: Export, page: Iterable[asyncpg.Record]) -> Iterable:
    for record in page:
        order = stored_view(record["state"], record["state_schema"])
        if export.kind == "orders":
            yield rows.order_row(order, record["paid_at"])
        elif export.kind == "payments":
            yield from rows.payment_rows(order, export.start, export.end)
        else:
            yield rows.refund_row(order, order.refund(record["refund_id"]))


class Reader:
    """Opened (connection, snapshot, cursor and its first page) before the answer starts, so that a database out of
    reach is still answered 503; then read a page at a time."""

    def __init__(self, pool: asyncpg.Pool, export: Export) -> None:
        self.pool, self.export = pool, export
        self._conn: asyncpg.Connection | None = None
        self._tx = None
        self._cursor = None
        self._first: list = []

    async def open(self) -> None:
        self._conn = await self.pool.acquire()
        try:
            tx = self._conn.transaction(isolation="repeatable_read", readonly=True)
            await tx.start()
            self._tx = tx
            e = self.export
            self._cursor = await self._conn.cursor(_SQL[e.kind], e.merchant_id, e.livemode, e.start, e.end, *e.filters)
            self._first = await self._cursor.fetch(PAGE)
        except BaseException:
            await self.close()
            raise

    async def pages(self) -> AsyncIterator[list]:
        page = self._first
        while page:
            yield list(_mapped(self.export, page))
            page = await self._cursor.fetch(PAGE) if len(page) == PAGE else []

    async def close(self) -> None:
        if self._conn is None:
            return
        conn, self._conn = self._conn, None
        try:
            if self._tx is not None:
                await self._tx.rollback()  # read only: nothing to keep
        finally:
            await self.pool.release(conn)
