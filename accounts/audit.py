"""The audit log: who did what, when, from where; rows are only ever added (a trigger refuses UPDATE and DELETE)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from common.ids import random_id

# The action names merchants filter by and read in the API: wire strings, never renamed once shipped.
ACTIONS = (
    "staff.signed_in", "staff.sign_in_failed", "staff.invited", "staff.role_changed", "staff.removed",
    "refund.issued", "refund.approved", "refund.rejected", "refund.canceled", "refund_link.created",
    "settings.changed", "api_key.rolled", "card_account.changed", "pin.locked_out", "sale.created",
    "staff.invitation_revoked", "pin.set", "notifications.changed", "api_key.created",
    "refund.retried", "refund.transaction_submitted",
    "webhook_endpoint.created", "webhook_endpoint.updated", "webhook_endpoint.enabled", "webhook_endpoint.disabled",
    "webhook_endpoint.secret_rolled", "webhook_endpoint.deleted", "webhook_endpoint.test_sent",
    "webhook_endpoint.redelivered",
    "payment_link.created", "payment_link.updated", "payment_link.archived", "payment_link.activated",
    "export.downloaded",
)
MAX_USER_AGENT = 512  # a header is the client's to fill: enough to tell browsers apart, not a place to store a book


class Actor(msgspec.Struct, frozen=True):
    type: str  # "staff", "api_key" or "operator" (a `service` command on the server)
    id: str  # the user id, the API key's public key, or the operator command
    email: str | None = None


class Origin(msgspec.Struct, frozen=True, kw_only=True):
    """Where a request came from, as the audit row keeps it."""

    client_ip: str | None = None
    user_agent: str | None = None
    request_id: str | None = None


class AuditEvent(msgspec.Struct, frozen=True, kw_only=True):
    event_id: str
    merchant_id: str
    livemode: bool | None
    actor_type: str
    actor_id: str
    actor_email: str | None
    action: str
    object_id: str | None
    order_id: str | None
    details: dict
    client_ip: str | None
    user_agent: str | None
    request_id: str | None
    created_at: datetime


_COLUMNS = ", ".join(AuditEvent.__struct_fields__)


async def record(db, merchant_id: str, actor: Actor, action: str, at: datetime, origin: Origin, *,
                 livemode: bool | None = None, object_id: str | None = None, order_id: str | None = None,
                 details: dict | None = None) -> None:
    """One row (db: a pool, or the connection whose transaction makes the change itself). An action that happens
    once to its object and was recorded already (a retried request) is not recorded twice."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    await db.execute(
        f"INSERT INTO audit_events ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
        " ON CONFLICT DO NOTHING",
        random_id("aud", at_ms=int(at.timestamp() * 1000)), merchant_id, livemode, actor.type, actor.id, actor.email,
        action, object_id, order_id, msgspec.json.encode(details or {}).decode(), origin.client_ip,
        (origin.user_agent or "")[:MAX_USER_AGENT] or None, origin.request_id, at,
    )


def _event(row) -> AuditEvent:
    values = dict(row)
    return AuditEvent(**{**values, "details": msgspec.json.decode(values["details"])})


async def page(db, merchant_id: str, *, livemode: bool | None = None, actor: str | None = None,
               action: str | None = None, created_gte: datetime | None = None, created_lt: datetime | None = None,
               before: tuple[datetime, str] | None = None, limit: int = 20) -> list[AuditEvent]:
    """Newest first. `livemode` is the reader's mode: live (True) or no mode (None) reads every event, test
    (False) the test mode's and those of no mode, never the live mode's; `before` is the (created_at, event_id)
    the previous page ended at."""
    where, args = ["merchant_id = $1"], [merchant_id]

    def add(clause: str, value) -> None:
        args.append(value)
        where.append(clause.replace("?", f"${len(args)}"))

    if livemode is False:
        add("(livemode IS NULL OR livemode = ?)", livemode)
    if actor is not None:
        add("actor_id = ?", actor)
    if action is not None:
        add("action = ?", action)
    if created_gte is not None:
        add("created_at >= ?", created_gte)
    if created_lt is not None:
        add("created_at < ?", created_lt)
    if before is not None:
        args.extend(before)
        where.append(f"(created_at, event_id) < (${len(args) - 1}, ${len(args)})")
    args.append(limit)
    rows = await db.fetch(f"SELECT {_COLUMNS} FROM audit_events WHERE {' AND '.join(where)}"
                          f" ORDER BY created_at DESC, event_id DESC LIMIT ${len(args)}", *args)
    return [_event(row) for row in rows]


async def of_order(db, merchant_id: str, order_id: str) -> list[AuditEvent]:
    """The refund actions taken on one order, oldest first, for its page."""
    rows = await db.fetch(f"SELECT {_COLUMNS} FROM audit_events WHERE merchant_id = $1 AND order_id = $2"
                          " ORDER BY created_at, event_id", merchant_id, order_id)
    return [_event(row) for row in rows]


async def actors(db, merchant_id: str) -> list[Actor]:
    """Everyone the merchant's log names, for the page's filter by person."""
    rows = await db.fetch("SELECT DISTINCT ON (actor_id) actor_type, actor_id, actor_email FROM audit_events"
                          " WHERE merchant_id = $1 ORDER BY actor_id, created_at DESC", merchant_id)
    return [Actor(row["actor_type"], row["actor_id"], row["actor_email"]) for row in rows]
