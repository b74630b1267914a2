"""The answers of the B2B team and audit routes: staff users, invitations and audit events."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from contract.api import Timestamp, deprecated_alias

Role = Literal["owner", "manager", "cashier"]


class StaffMember(msgspec.Struct, kw_only=True):
    object: Literal["staff_member"] = "staff_member"
    user_id: str
    email: str
    role: Role
    created_at: Timestamp
    last_signed_in_at: Timestamp | None
    pin_set: bool


class StaffMemberRemoved(msgspec.Struct, kw_only=True):
    object: Literal["staff_member"] = "staff_member"
    user_id: str
    removed: Literal[True] = True


class InvitationCreated(msgspec.Struct, kw_only=True):
    """The link is in this answer only: the service keeps its hash."""

    invitation_id: str
    url: str
    expires_at: Timestamp


class InvitationRevoked(msgspec.Struct, kw_only=True):
    object: Literal["staff_invitation"] = "staff_invitation"
    invitation_id: str
    revoked: Literal[True] = True


class AuditActor(msgspec.Struct, kw_only=True):
    type: Literal["staff", "api_key", "operator"]
    actor_id: str  # the staff user's id, the API key's public key, or the `service` command an operator ran
    id: deprecated_alias("actor_id")
    email: str | None


class AuditEvent(msgspec.Struct, kw_only=True):
    object: Literal["audit_event"] = "audit_event"
    audit_event_id: str
    id: deprecated_alias("audit_event_id")
    action: str
    actor: AuditActor
    object_id: str | None
    order_id: str | None
    livemode: bool | None  # null for the team's own actions, which belong to no mode
    details: dict[str, Any]
    client_ip: str | None
    user_agent: str | None
    request_id: str | None
    created_at: Timestamp
