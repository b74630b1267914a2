"""Accounting exports: `GET /merchants/{merchant_id}/exports/{orders|payments|refunds}`, streamed as they are read.

`from` (inclusive) and `to` (exclusive) bound the kind's own time: an order's creation, a payment's confirmation, a
refund's creation; the orders filters of the list (status, created_*, paid_*) narrow the orders the rows belong to.
"""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from common.clock import iso
from contract.exports import ROWS
from web.api import audit_trail
from web.api.handlers.merchants import own_merchant_id
from web.api.route import Route
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.exports import formats
from web.exports.reader import KINDS, Export, Reader
from web.reads import order_filters
from web.reads.instants import instant

PARAMS = ("from", "to", "format", *order_filters.NAMES)
FLUSH_BYTES = 64 * 1024


def export_of(request: web.Request, kind: str) -> tuple[Export, str]:
    """The export the query asks for, and its format; anything unknown is a 422 naming it."""
    query = request.query
    unknown = sorted(set(query) - set(PARAMS))
    if unknown:
        raise ApiError(422, "unknown_parameter", f"Unknown query parameter `{unknown[0]}`.", unknown[0])
    fmt = query.get("format") or "csv"
    if fmt not in formats.FORMATS:
        raise ApiError(422, "invalid_format", "`format` must be csv or jsonl.", "format")
    start, end = instant(query.get("from"), "from"), instant(query.get("to"), "to")
    if start is not None and end is not None and start >= end:
        raise ApiError(422, "invalid_range", "`from` must be before `to`.", "from")
    api_key = caller(request)
    return Export(kind, api_key.merchant_id, api_key.livemode, start, end, order_filters.parse(query)), fmt


def _stamp(moment: datetime | None, open_end: str) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ") if moment else open_end


def file_name(export: Export, fmt: str) -> str:
    mode = "live" if export.livemode else "test"
    return f"{export.kind}-{mode}-{_stamp(export.start, 'start')}-{_stamp(export.end, 'now')}.{fmt}"


async def stream(request: web.Request, kind: str) -> web.StreamResponse:
    """The export as a download, written a page of rows at a time (the API's and the dashboard's)."""
    export, fmt = export_of(request, kind)
    content_type, _ext = formats.FORMATS[fmt]
    writer = formats.WRITERS[fmt](ROWS[kind])
    reader = Reader(ctx(request).pool, export)
    await reader.open()
    rows, complete = 0, False
    try:
        response = web.StreamResponse(headers={
            "Content-Type": content_type, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
            "Content-Disposition": f'attachment; filename="{file_name(export, fmt)}"'})
        await response.prepare(request)
        buffered = bytearray(writer.header())
        async for page in reader.pages():
            rows += len(page)
            buffered += writer.rows(page)
            if len(buffered) >= FLUSH_BYTES:
                await response.write(bytes(buffered))
                buffered.clear()
        await response.write(bytes(buffered))
        await response.write_eof()
        complete = True
        return response
    finally:
        await reader.close()
        await _recorded(request, export, fmt, rows, complete)


async def _recorded(request: web.Request, export: Export, fmt: str, rows: int, complete: bool) -> None:
    """Who took which rows out: the kind, range, format and filters, and how many rows were sent (`complete`
    false when the download broke off, the rows sent until then counted)."""
    filters = {name: iso(value) if isinstance(value, datetime) else value
               for name, value in export.filters._asdict().items() if value is not None}
    await audit_trail.record(request, "export.downloaded", details={
        "kind": export.kind, "from": iso(export.start) if export.start else None,
        "to": iso(export.end) if export.end else None, "format": fmt, "filters": filters, "rows": rows,
        "complete": complete})


def _handler(kind: str):
    @audit_trail.records("export.downloaded")
    async def handler(request: web.Request) -> web.StreamResponse:
        own_merchant_id(request)
        return await stream(request, kind)
    handler.__name__ = f"export_{kind}"
    return handler


ROUTES = [
    Route("GET", f"/merchants/{{merchant_id}}/exports/{kind}", _handler(kind),
          f"Export the {kind} of a time range as CSV or JSON Lines, streamed (docs/api.md, Exports)",
          response=ROWS[kind], query=PARAMS, streamed=True)
    for kind in KINDS
]
