"""The webhook delivery log: each delivery with every attempt (its request, answer and latency)."""

from __future__ import annotations

import msgspec
from aiohttp import web

from common.clock import iso
from contract import api as contract
from web.api.answers import respond
from web.api.handlers.merchants import own_merchant_id
from web.api.route import Route
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads.pagination import Page
from webhooks import deliveries

BASE = "/merchants/{merchant_id}/webhook-deliveries"
STATUSES = ("pending", "succeeded", "failed")


DELIVERY_LIST = contract.page_of(contract.Delivery)


def _attempt_json(a) -> contract.DeliveryAttempt:
    return contract.DeliveryAttempt(
        number=a["number"],
        attempted_at=iso(a["attempted_at"]),
        url=a["url"],
        request_headers=msgspec.json.decode(a["request_headers"]),
        status_code=a["status_code"],
        error=a["error"],
        latency_ms=a["latency_ms"],
        response_body=a["response_body"],
        succeeded=a["succeeded"],
    )


def _delivery_json(d, attempts: list) -> contract.Delivery:
    return contract.Delivery(
        delivery_id=d["delivery_id"],
        id=d["delivery_id"],
        webhook_endpoint_id=d["endpoint_id"],
        endpoint_id=d["endpoint_id"],
        event_id=d["event_id"],
        event_type=d["event_type"],
        status=d["status"],
        attempt_count=d["attempts"],
        next_attempt_at=iso(d["next_attempt_at"]) if d["next_attempt_at"] and d["status"] == "pending" else None,
        last_status_code=d["last_status_code"],
        last_error=d["last_error"],
        request_body=bytes(d["payload"]).decode(),  # the exact bytes every attempt sent and signed
        attempts=[_attempt_json(a) for a in attempts],
        created_at=iso(d["created_at"]),
    )


async def _with_attempts(conn, rows) -> list[contract.Delivery]:
    logged = await deliveries.attempts(conn, [r["delivery_id"] for r in rows])
    return [_delivery_json(r, logged.get(r["delivery_id"], [])) for r in rows]


async def list_deliveries(request: web.Request) -> web.Response:
    merchant_id, api_key = own_merchant_id(request), caller(request)
    page = Page(request, ("webhook_endpoint_id", "endpoint_id", "event_id", "status"))
    # `endpoint_id`: the filter's name before `webhook_endpoint_id`, still understood throughout /b2b/v1.
    page.filters["endpoint_id"] = page.filters.pop("webhook_endpoint_id") or page.filters["endpoint_id"]
    if page.filters["status"] not in (None, *STATUSES):
        raise ApiError(422, "invalid_status", f"`status` must be one of {', '.join(STATUSES)}.", "status")
    async with ctx(request).pool.acquire() as conn:
        rows = await deliveries.page(conn, merchant_id, api_key.livemode, page.filters, page.before, page.limit + 1)
        data = await _with_attempts(conn, rows[: page.limit])
    return respond(page.answer(DELIVERY_LIST, data, rows, lambda r: (r["created_at"], r["delivery_id"])))


async def get_delivery(request: web.Request) -> web.Response:
    merchant_id, api_key = own_merchant_id(request), caller(request)
    async with ctx(request).pool.acquire() as conn:
        rows = await deliveries.page(conn, merchant_id, api_key.livemode,
                                     {"delivery_id": request.match_info["delivery_id"]}, None, 1)
        if not rows:
            raise ApiError(404, "webhook_delivery_not_found", "No such webhook delivery.", "delivery_id")
        return respond((await _with_attempts(conn, rows))[0])


ROUTES = [
    Route("GET", BASE, list_deliveries, "The delivery log, newest first; filter by webhook_endpoint_id, event_id or status", response=DELIVERY_LIST),
    Route("GET", BASE + "/{delivery_id}", get_delivery, "One delivery with every attempt", response=contract.Delivery),
]
