"""Typed answers: each model declares the fields a merchant backend relies on, checked when the answer is read;
fields the service adds later are kept and readable too, so a newer service never breaks an older library."""

from __future__ import annotations

import typing
from typing import Any, ClassVar, Union

from .errors import DecodeError


class ResponseInfo:
    """How an answer came: HTTP status, headers, request id, and how many attempts it took."""

    def __init__(self, status: int, headers: dict[str, str], attempts: int):
        self.status, self.headers, self.attempts = status, headers, attempts
        self.request_id = headers.get("x-request-id")
        self.idempotent_replayed = headers.get("idempotent-replayed") == "true"


class ApiObject:
    """An object of the API. Declared fields (annotations) are type-checked; `obj.field` and `obj["field"]` read
    any field; `to_dict()` gives the JSON as it came."""

    _types: ClassVar[dict[str, Any]] = {}
    response: ResponseInfo | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hints = typing.get_type_hints(cls)
        cls._types = {k: v for k, v in hints.items() if not k.startswith("_") and k != "response"}

    def __init__(self, values: dict[str, Any], where: str = ""):
        if not isinstance(values, dict):
            raise DecodeError(f"{where or type(self).__name__}: expected a JSON object, got {type(values).__name__}")
        self._values = dict(values)
        for name, tp in self._types.items():
            self._values[name] = _checked(values.get(name), tp, f"{where or type(self).__name__}.{name}",
                                          missing=name not in values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __contains__(self, name: str) -> bool:
        return name in self._values

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def to_dict(self) -> dict[str, Any]:
        return {k: v.to_dict() if isinstance(v, ApiObject) else
                [x.to_dict() if isinstance(x, ApiObject) else x for x in v] if isinstance(v, list) else v
                for k, v in self._values.items()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiObject) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"


def _checked(value: Any, tp: Any, where: str, missing: bool = False) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Union or (origin is not None and type(None) in args and len(args) > 1):
        if value is None:
            if type(None) in args:
                return None
            raise DecodeError(f"{where}: {'missing' if missing else 'null'}, expected {tp}")
        inner = [a for a in args if a is not type(None)]
        return _checked(value, inner[0] if len(inner) == 1 else Any, where)
    if tp is Any:
        return value
    if missing:
        raise DecodeError(f"{where}: missing from the answer")
    if isinstance(tp, type) and issubclass(tp, ApiObject):
        return tp(value, where)
    if origin is list:
        if not isinstance(value, list):
            raise DecodeError(f"{where}: expected a list, got {type(value).__name__}")
        return [_checked(v, args[0], f"{where}[{i}]") for i, v in enumerate(value)] if args else value
    expected = origin or tp
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise DecodeError(f"{where}: expected {getattr(expected, '__name__', expected)}, got {type(value).__name__}")
    return value


class LineItem(ApiObject):
    name: str
    quantity: int
    unit_amount: str
    amount: str


class Payment(ApiObject):
    payment_id: str
    network: str
    amount: str


class CheckoutSession(ApiObject):
    session_id: str
    session_key: str
    order_id: str
    status: str
    amount_due: str
    checkout_url: str
    expires_at: str


class Order(ApiObject):
    order_id: str
    order_number: str
    livemode: bool
    status: str
    amount: str
    amount_paid: str
    amount_refunded: str
    amount_due: str
    line_items: list[LineItem]
    external_ref: str | None
    metadata: dict
    payments: list[Payment]
    created_at: str


class QuickSession(ApiObject):
    """The answer of a quick session: the session's fields and the new order."""

    order_id: str
    order_number: str
    session_id: str
    session_key: str
    checkout_url: str
    expires_at: str
    amount_due: str
    status: str
    order: Order


class Refund(ApiObject):
    refund_id: str
    order_id: str
    livemode: bool
    status: str
    amount: str
    reason: str
    created_at: str


class RefundRequest(ApiObject):
    token: str
    refund_url: str
    status: str
    order_id: str
    amount: str
    expires_at: str


class Merchant(ApiObject):
    merchant_id: str
    name: str
    livemode: bool


class MerchantSettings(ApiObject):
    merchant_id: str
    auto_approve_customer_refunds: bool
    receive_addresses: dict


class Event(ApiObject):
    """A webhook event, as delivered and as `events.list` answers it."""

    id: str
    type: str
    created_at: str
    livemode: bool
    data: dict


class WebhookEndpoint(ApiObject):
    webhook_endpoint_id: str  # also answered as `id`, a deprecated alias (docs/api.md, Names)
    url: str
    enabled_events: list[str]
    status: str
    livemode: bool
    secret: str | None  # only in the answers of create and roll_secret


class WebhookDelivery(ApiObject):
    delivery_id: str  # `id` and `endpoint_id` are answered too, as deprecated aliases
    webhook_endpoint_id: str
    event_id: str
    status: str
    attempt_count: int


class Redelivery(ApiObject):
    webhook_endpoint_id: str
    delivery_ids: list[str]


class StaffMember(ApiObject):
    user_id: str
    email: str
    role: str  # owner, manager or cashier
    created_at: str
    last_signed_in_at: str | None
    pin_set: bool


class StaffMemberRemoved(ApiObject):
    user_id: str
    removed: bool


class InvitationCreated(ApiObject):
    """The invitation's one-time link is in this answer only: keep it or send it now."""

    invitation_id: str
    url: str
    expires_at: str


class InvitationRevoked(ApiObject):
    invitation_id: str
    revoked: bool


class AuditActor(ApiObject):
    type: str  # "staff", "api_key" or "operator"
    actor_id: str  # the staff user's id, the API key's public key or the operator's command (also `id`, a deprecated alias)
    email: str | None


class AuditEvent(ApiObject):
    audit_event_id: str  # also `id`, a deprecated alias
    action: str
    actor: AuditActor
    object_id: str | None
    order_id: str | None
    livemode: bool | None  # None for the team's own actions, which belong to no mode
    details: dict
    client_ip: str | None
    user_agent: str | None
    request_id: str | None
    created_at: str


class PaymentLink(ApiObject):
    """A link shared with many buyers; each buyer who pays through it gets an order of their own."""

    payment_link_id: str
    livemode: bool
    url: str  # the buyer's page, to share
    name: str
    description: str | None
    amount: str | None  # None: the buyer enters the amount, within min_amount and max_amount
    min_amount: str | None
    max_amount: str | None
    max_uses: int | None
    uses: int  # orders made through the link
    expires_at: str | None
    status: str  # active or archived
    unavailable_reason: str | None  # archived, expired or used_up; None while buyers can pay
    orders: int
    paid_orders: int
    amount_paid: str
    created_at: str
    updated_at: str


class OrderExportRow(ApiObject):
    """A row of the orders export; the columns of docs/api.md, Exports (new ones only ever at the end)."""

    order_id: str
    order_number: str
    livemode: bool
    status: str
    currency: str
    amount_owed: str
    amount_paid: str
    amount_refunded: str
    external_ref: str | None
    metadata: str  # the order's metadata as one JSON object
    created_at: str
    paid_at: str | None
    updated_at: str


class PaymentExportRow(ApiObject):
    payment_id: str
    order_id: str
    order_number: str
    livemode: bool
    rail: str  # chain or card
    network: str
    provider: str | None
    transaction: str
    amount: str
    currency: str
    asset: str
    token_address: str | None
    late: bool
    confirmed_at: str


class RefundExportRow(ApiObject):
    refund_id: str
    order_id: str
    order_number: str
    livemode: bool
    rail: str
    status: str
    amount: str
    currency: str
    reason: str
    note: str | None
    destination: str | None
    network: str
    token_address: str | None
    transaction: str | None
    source: str  # merchant or customer
    approved_by: str | None
    created_at: str
    updated_at: str
