"""Webhook endpoints of the mode with their recent deliveries, and redelivery of one delivery's event."""

from __future__ import annotations

from aiohttp import web

from web.context import caller, ctx
from web.dashboard.guard import done, form, signed_in
from common.roles import Can
from web.errors import ApiError
from webhooks import deliveries, endpoints, store
from webhooks import events as event_log

RECENT = 10


async def endpoints_with_deliveries(request: web.Request) -> list[dict]:
    api_key = caller(request)
    async with ctx(request).pool.acquire() as conn:
        found = []
        for endpoint in await endpoints.listing(conn, api_key.merchant_id, api_key.livemode):
            recent = await deliveries.page(conn, api_key.merchant_id, api_key.livemode,
                                           {"endpoint_id": endpoint.endpoint_id}, None, RECENT)
            found.append({"endpoint": endpoint, "deliveries": [dict(r) for r in recent]})
        return found


@signed_in(Can.CONFIGURE)
async def redeliver(request: web.Request) -> web.Response:
    """The same checks and write as POST .../webhook-endpoints/{id}/redeliver with an event_id."""
    api_key, c = caller(request), ctx(request)
    event_id = (await form(request)).get("event_id", "")
    async with c.pool.acquire() as conn, conn.transaction():
        endpoint = await endpoints.get(conn, api_key.merchant_id, api_key.livemode, request.match_info["endpoint_id"])
        if endpoint is None:
            raise ApiError(404, "webhook_endpoint_not_found", "No such webhook endpoint.", "endpoint_id")
        if endpoint.status != "enabled":
            raise ApiError(409, "webhook_endpoint_disabled", "Enable the endpoint before redelivering to it.")
        envelope = await event_log.find(conn, api_key.merchant_id, api_key.livemode, event_id)
        if envelope is None:
            raise ApiError(404, "event_not_found", "No such event.", "event_id")
        await store.redeliver_event(conn, endpoint.endpoint_id, api_key.merchant_id, envelope, c.clock())
    settings_path = request.path.split("/webhooks/", 1)[0] + "/settings"
    raise await done(request, settings_path + "#webhooks", f"Event {event_id} queued for delivery again.")
