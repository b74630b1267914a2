"""Webhook endpoints (signed calls): register, read, change, delete, roll the secret, redeliver; all webhook routes."""

from __future__ import annotations

from datetime import timedelta

from aiohttp import web

from common.clock import iso
from contract import api as contract
from web.api import audit_trail
from web.api.answers import respond
from web.api.commands import body
from web.api.handlers import events, webhook_deliveries
from web.api.handlers.merchants import own_merchant_id
from web.api.route import Route
from web.api.webhook_bodies import EndpointIn, EndpointPatchIn, RedeliverIn, RollSecretIn
from web.edge import idempotency
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads.instants import within_records
from webhooks import endpoints, ssrf, store
from webhooks import events as event_log
from webhooks.endpoints import ALL_EVENTS, MAX_PER_MODE, Endpoint

BASE = "/merchants/{merchant_id}/webhook-endpoints"
ENDPOINT_LIST = contract.page_of(contract.WebhookEndpoint)


def endpoint_json(e: Endpoint, shape: type = contract.WebhookEndpoint, **extra):
    return shape(
        webhook_endpoint_id=e.endpoint_id,
        id=e.endpoint_id,
        url=e.url,
        description=e.description,
        enabled_events=list(e.enabled_events),
        status=e.status,
        disabled_reason=e.disabled_reason,
        livemode=e.livemode,
        failing_since=iso(e.failing_since) if e.failing_since else None,
        previous_secret_expires_at=iso(e.previous_secret_expires_at) if e.previous_secret_expires_at else None,
        created_at=iso(e.created_at),
        updated_at=iso(e.updated_at),
        **extra,
    )


def checked_url(url: str, livemode: bool) -> str:
    refused = ssrf.refusal(url, livemode)
    if refused:
        raise ApiError(422, refused[0], refused[1], "url")
    return url


def event_types(types: list[str]) -> list[str]:
    unique = list(dict.fromkeys(types))
    if ALL_EVENTS in unique and len(unique) > 1:
        raise ApiError(422, "invalid_enabled_events", "`*` means every event type; send it alone.", "enabled_events")
    return unique


async def endpoint_of(request: web.Request, conn) -> Endpoint:
    """The path's endpoint, which must be the caller's merchant's and mode's (otherwise 404)."""
    api_key = caller(request)
    found = await endpoints.get(conn, own_merchant_id(request), api_key.livemode, request.match_info["webhook_endpoint_id"])
    if found is None:
        raise ApiError(404, "webhook_endpoint_not_found", "No such webhook endpoint.", "webhook_endpoint_id")
    return found


@audit_trail.records("webhook_endpoint.created")
async def create_endpoint(request: web.Request) -> web.Response:
    merchant_id, api_key = own_merchant_id(request), caller(request)
    endpoint_in = await body(request, EndpointIn)
    url = checked_url(endpoint_in.url, api_key.livemode)
    types = event_types(endpoint_in.enabled_events)

    async def work(conn) -> web.Response:
        endpoint, secret = await register(request, conn, merchant_id, url, types, endpoint_in.description)
        return respond(endpoint_json(endpoint, contract.WebhookEndpointWithSecret, secret=secret), status=201)

    return await idempotency.once(request, work)


async def register(request: web.Request, conn, merchant_id: str, url: str, types: list[str],
                   description: str | None) -> tuple[Endpoint, str]:
    """A checked endpoint registered, with its secret: the API's and the dashboard's one way to add one."""
    c, livemode = ctx(request), caller(request).livemode
    if await endpoints.count_locked(conn, merchant_id, livemode) >= MAX_PER_MODE:
        raise ApiError(409, "too_many_endpoints", f"A merchant has at most {MAX_PER_MODE} webhook endpoints per mode.",
                       "url")
    endpoint, secret = await endpoints.create(conn, c.vault, merchant_id, livemode, url, types, description, c.clock())
    await audit_trail.record(request, "webhook_endpoint.created", db=conn, object_id=endpoint.endpoint_id,
                             details={"url": url, "enabled_events": types, "description": description})
    return endpoint, secret


async def change(request: web.Request, conn, endpoint: Endpoint, changes: dict) -> Endpoint:
    """The API's and the dashboard's one way to change an endpoint; enabling or disabling alone is recorded as
    such, anything else as an update naming the new values."""
    changed = await endpoints.update(conn, endpoint, changes, ctx(request).clock())
    action = f"webhook_endpoint.{changes['status']}" if set(changes) == {"status"} else "webhook_endpoint.updated"
    await audit_trail.record(request, action, db=conn, object_id=endpoint.endpoint_id, details={"changed": changes})
    return changed


async def remove(request: web.Request, conn, endpoint: Endpoint) -> None:
    await endpoints.delete(conn, endpoint, ctx(request).clock())
    await audit_trail.record(request, "webhook_endpoint.deleted", db=conn, object_id=endpoint.endpoint_id,
                             details={"url": endpoint.url})


async def roll(request: web.Request, conn, endpoint: Endpoint, overlap_seconds: int) -> tuple[Endpoint, str]:
    """A new secret (never recorded), the old one signing beside it for `overlap_seconds`."""
    c = ctx(request)
    rolled, secret = await endpoints.roll(conn, c.vault, endpoint, timedelta(seconds=overlap_seconds), c.clock())
    await audit_trail.record(request, "webhook_endpoint.secret_rolled", db=conn, object_id=endpoint.endpoint_id,
                             details={"overlap_seconds": overlap_seconds})
    return rolled, secret


async def redelivered(request: web.Request, conn, endpoint: Endpoint, delivery_ids: list[str], asked: dict) -> None:
    await audit_trail.record(request, "webhook_endpoint.redelivered", db=conn, object_id=endpoint.endpoint_id,
                             details={**asked, "deliveries": len(delivery_ids)})


async def list_endpoints(request: web.Request) -> web.Response:
    found = await endpoints.listing(ctx(request).pool, own_merchant_id(request), caller(request).livemode)
    return respond(ENDPOINT_LIST(data=[endpoint_json(e) for e in found], has_more=False))


async def get_endpoint(request: web.Request) -> web.Response:
    async with ctx(request).pool.acquire() as conn:
        return respond(endpoint_json(await endpoint_of(request, conn)))


@audit_trail.records("webhook_endpoint.updated", "webhook_endpoint.enabled", "webhook_endpoint.disabled")
async def update_endpoint(request: web.Request) -> web.Response:
    own_merchant_id(request)
    patch = await body(request, EndpointPatchIn)
    changes = {name: getattr(patch, name) for name in patch.__struct_fields__ if getattr(patch, name) is not None}
    if "url" in changes:
        checked_url(changes["url"], caller(request).livemode)
    if "enabled_events" in changes:
        changes["enabled_events"] = event_types(changes["enabled_events"])

    async def work(conn) -> web.Response:
        return respond(endpoint_json(await change(request, conn, await endpoint_of(request, conn), changes)))

    return await idempotency.once(request, work)


@audit_trail.records("webhook_endpoint.deleted")
async def delete_endpoint(request: web.Request) -> web.Response:
    async with ctx(request).pool.acquire() as conn, conn.transaction():
        endpoint = await endpoint_of(request, conn)
        await remove(request, conn, endpoint)
    return respond(contract.WebhookEndpointDeleted(webhook_endpoint_id=endpoint.endpoint_id,
                                                   id=endpoint.endpoint_id))


@audit_trail.records("webhook_endpoint.secret_rolled")
async def roll_secret(request: web.Request) -> web.Response:
    own_merchant_id(request)
    asked = await body(request, RollSecretIn)

    async def work(conn) -> web.Response:
        endpoint, secret = await roll(request, conn, await endpoint_of(request, conn), asked.overlap_seconds)
        return respond(endpoint_json(endpoint, contract.WebhookEndpointWithSecret, secret=secret))

    return await idempotency.once(request, work)


@audit_trail.records("webhook_endpoint.redelivered")
async def redeliver(request: web.Request) -> web.Response:
    merchant_id, api_key = own_merchant_id(request), caller(request)
    again = await body(request, RedeliverIn)
    if (again.event_id is None) == (again.failed_since is None):
        raise ApiError(422, "event_id_or_failed_since", "Send exactly one of `event_id` and `failed_since`.", "event_id")
    now = ctx(request).clock()

    async def work(conn) -> web.Response:
        endpoint = await endpoint_of(request, conn)
        if endpoint.status != "enabled":
            raise ApiError(409, "webhook_endpoint_disabled", "Enable the endpoint before redelivering to it.",
                           "webhook_endpoint_id")
        if again.event_id is not None:
            envelope = await event_log.find(conn, merchant_id, api_key.livemode, again.event_id)
            if envelope is None:
                raise ApiError(404, "event_not_found", "No such event.", "event_id")
            ids = [await store.redeliver_event(conn, endpoint.endpoint_id, merchant_id, envelope, now)]
        else:
            since = within_records(again.failed_since)
            ids = await store.redeliver_failed(conn, endpoint.endpoint_id, since, now)
        await redelivered(request, conn, endpoint, ids, {"event_id": again.event_id, "failed_since": (
            iso(within_records(again.failed_since)) if again.failed_since else None)})
        return respond(contract.Redelivery(webhook_endpoint_id=endpoint.endpoint_id,
                                           endpoint_id=endpoint.endpoint_id, delivery_ids=ids), status=202)

    return await idempotency.once(request, work)


ROUTES = [
    Route("POST", BASE, create_endpoint, "Register a webhook endpoint; its signing secret is shown once", EndpointIn, 201, response=contract.WebhookEndpointWithSecret),
    Route("GET", BASE, list_endpoints, "List the webhook endpoints of this mode", response=ENDPOINT_LIST),
    Route("GET", BASE + "/{webhook_endpoint_id}", get_endpoint, "Read a webhook endpoint", response=contract.WebhookEndpoint),
    Route("PATCH", BASE + "/{webhook_endpoint_id}", update_endpoint,
          "Change a webhook endpoint's url, event types, description or status", EndpointPatchIn, response=contract.WebhookEndpoint),
    Route("DELETE", BASE + "/{webhook_endpoint_id}", delete_endpoint, "Delete a webhook endpoint", response=contract.WebhookEndpointDeleted),
    Route("POST", BASE + "/{webhook_endpoint_id}/roll-secret", roll_secret,
          "Replace the signing secret; the old one keeps signing for overlap_seconds", RollSecretIn, response=contract.WebhookEndpointWithSecret),
    Route("POST", BASE + "/{webhook_endpoint_id}/redeliver", redeliver,
          "Deliver one event again, or every failed delivery since a time", RedeliverIn, 202, response=contract.Redelivery),
    *webhook_deliveries.ROUTES,
    *events.ROUTES,
]
