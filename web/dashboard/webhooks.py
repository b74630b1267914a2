"""Webhook endpoints of the mode with their recent deliveries: add one (its secret shown once), disable or enable,
delete, roll its secret, send it a test event, and redeliver one delivery's event. Owners only (Can.CONFIGURE)."""

from __future__ import annotations

import re

from aiohttp import web

from accounts.roles import Can
from web.api import audit_trail
from web.api.handlers.webhooks import change, checked_url, event_types, redelivered, register, remove, roll
from web.api.webhook_bodies import EndpointIn, RollSecretIn
from web.dashboard import settings
from web.dashboard.guard import done, signed_in
from web.edge import decoding
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.edge.forms import form
from webhooks import endpoints, store
from webhooks import events as event_log


def _settings(request: web.Request) -> str:
    return request.path.split("/webhooks", 1)[0] + "/settings"


async def _endpoint(request: web.Request, conn) -> endpoints.Endpoint:
    api_key = caller(request)
    found = await endpoints.get(conn, api_key.merchant_id, api_key.livemode, request.match_info["endpoint_id"])
    if found is None:
        raise ApiError(404, "webhook_endpoint_not_found", "No such webhook endpoint.", "endpoint_id")
    return found


def _enabled(endpoint: endpoints.Endpoint) -> None:
    if endpoint.status != "enabled":
        raise ApiError(409, "webhook_endpoint_disabled", "Enable the endpoint before sending to it.", "endpoint_id")


@signed_in(Can.CONFIGURE)
@audit_trail.records("webhook_endpoint.created")
async def add(request: web.Request) -> web.Response:
    """The checks and write of POST .../webhook-endpoints; a refusal shows on the settings page, field named."""
    fields = await form(request)
    body = {"url": fields.get("url", ""), "enabled_events": re.split(r"[\s,]+", fields.get("events", "*").strip())}
    if "description" in fields:
        body["description"] = fields["description"]
    try:
        endpoint_in = decoding.convert(body, EndpointIn)
        url, types = checked_url(endpoint_in.url, caller(request).livemode), event_types(endpoint_in.enabled_events)
        async with ctx(request).pool.acquire() as conn, conn.transaction():
            endpoint, secret = await register(request, conn, caller(request).merchant_id, url, types,
                                              endpoint_in.description)
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return await settings.page(request, code=exc.status, error=exc, webhook_form=fields)
    return await settings.page(request, webhook_secret={"endpoint_id": endpoint.endpoint_id, "secret": secret})


@signed_in(Can.CONFIGURE)
@audit_trail.records("webhook_endpoint.secret_rolled")
async def roll_secret(request: web.Request) -> web.Response:
    """A new secret, shown in this answer only; the old one keeps signing beside it for the API's default overlap."""
    await form(request)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        endpoint, secret = await roll(request, conn, await _endpoint(request, conn), RollSecretIn().overlap_seconds)
    return await settings.page(request, webhook_secret={"endpoint_id": endpoint.endpoint_id, "secret": secret})


async def _set_status(request: web.Request, status: str, said: str) -> web.Response:
    await form(request)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        endpoint = await change(request, conn, await _endpoint(request, conn), {"status": status})
    raise await done(request, _settings(request) + "#webhooks", f"{endpoint.url} {said}.")


@signed_in(Can.CONFIGURE)
@audit_trail.records("webhook_endpoint.disabled")
async def disable(request: web.Request) -> web.Response:
    return await _set_status(request, "disabled", "disabled: it is sent nothing until enabled again")


@signed_in(Can.CONFIGURE)
@audit_trail.records("webhook_endpoint.enabled")
async def enable(request: web.Request) -> web.Response:
    return await _set_status(request, "enabled", "enabled")


@signed_in(Can.CONFIGURE)
@audit_trail.records("webhook_endpoint.deleted")
async def delete(request: web.Request) -> web.Response:
    await form(request)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        endpoint = await _endpoint(request, conn)
        await remove(request, conn, endpoint)
    raise await done(request, _settings(request) + "#webhooks", f"{endpoint.url} deleted.")


@signed_in(Can.CONFIGURE)
@audit_trail.records("webhook_endpoint.test_sent")
async def send_test(request: web.Request) -> web.Response:
    await form(request)
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        endpoint = await _endpoint(request, conn)
        _enabled(endpoint)
        event, _delivery_id = await endpoints.send_test_event(conn, endpoint, ctx(request).clock())
        await audit_trail.record(request, "webhook_endpoint.test_sent", db=conn, object_id=endpoint.endpoint_id,
                                 details={"event_id": event.id})
    raise await done(request, _settings(request) + "#webhooks",
                     f"Test event {event.id} sent to {endpoint.url}: its delivery shows below.")


@signed_in(Can.CONFIGURE)
@audit_trail.records("webhook_endpoint.redelivered")
async def redeliver(request: web.Request) -> web.Response:
    """The same checks and write as POST .../webhook-endpoints/{id}/redeliver with an event_id."""
    api_key, c = caller(request), ctx(request)
    event_id = (await form(request)).get("event_id", "")
    async with c.pool.acquire() as conn, conn.transaction():
        endpoint = await _endpoint(request, conn)
        _enabled(endpoint)
        envelope = await event_log.find(conn, api_key.merchant_id, api_key.livemode, event_id)
        if envelope is None:
            raise ApiError(404, "event_not_found", "No such event.", "event_id")
        delivery_id = await store.redeliver_event(conn, endpoint.endpoint_id, api_key.merchant_id, envelope, c.clock())
        await redelivered(request, conn, endpoint, [delivery_id], {"event_id": event_id})
    raise await done(request, _settings(request) + "#webhooks", f"Event {event_id} queued for delivery again.")
