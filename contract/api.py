"""The public shapes of the B2B API's answers, declared once: the OpenAPI document is generated from these
structs, answers are encoded from them, and tests/contract pins them. Built from the order's state by the explicit
mapping functions of web/api/answers.py, never by reflecting internal field names, so renaming a field of the actor's
state cannot change what merchants read. Wire names never change once shipped; new fields only with defaults."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

Amount = Annotated[str, Meta(pattern=r"^-?[0-9]+\.[0-9]{2,6}$", description="USD as a decimal string, e.g. \"10.50\"")]
Timestamp = Annotated[str, Meta(extra_json_schema={"format": "date-time"}, description="ISO 8601, UTC")]
OrderStatus = Literal["PENDING", "PAID", "PARTIAL_PAID", "CANCELED", "REFUNDED", "PARTIALLY_REFUNDED"]
SessionStatus = Literal["OPEN", "COMPLETED", "EXPIRED", "SUPERSEDED", "CANCELED"]
RefundStatus = Literal["PENDING", "APPROVED", "REJECTED", "EXECUTED"]
TokenStatus = Literal["ACTIVE", "SUBMITTED", "EXPIRED_UNUSED", "CANCELED", "RENEWAL_REQUESTED", "RENEWED"]


def deprecated_alias(name: str) -> Any:
    """A field answered beside `name`, under the name it had before every id was named `<object>_id` and every field
    snake_case: kept throughout /b2b/v1 so that no caller breaks, marked deprecated in the OpenAPI document, and
    dropped in /b2b/v2 (docs/api.md, Names)."""
    return Annotated[str, Meta(description=f"Deprecated alias of `{name}`: read `{name}`.",
                               extra_json_schema={"deprecated": True})]


class LineItem(msgspec.Struct, kw_only=True):
    name: str
    quantity: int
    unit_amount: Amount
    amount: Amount


class Payment(msgspec.Struct, kw_only=True):
    payment_id: str
    network: str
    tx_hash: str
    token_address: str
    amount: Amount
    session_id: str | None
    late: bool
    received_at: Timestamp


class CheckoutSession(msgspec.Struct, kw_only=True):
    object: Literal["checkout_session"] = "checkout_session"
    session_id: str
    session_key: str
    order_id: str
    status: SessionStatus
    amount_due: Amount
    checkout_url: str
    expires_at: Timestamp
    success_url: str | None
    cancel_url: str | None
    created_at: Timestamp


class Order(msgspec.Struct, kw_only=True):
    object: Literal["order"] = "order"
    order_id: str
    order_number: str
    livemode: bool
    status: OrderStatus
    currency: Literal["USD"] = "USD"
    amount: Amount
    amount_owed: Amount
    amount_paid: Amount
    amount_refunded: Amount
    amount_due: Amount
    line_items: list[LineItem]
    external_ref: str | None
    metadata: dict[str, str]
    payments: list[Payment]
    sessions: list[CheckoutSession]
    created_at: Timestamp
    updated_at: Timestamp
    # The buyer's receipt on the checkout origin once the order is paid (PAID or refunded), null before.
    receipt_url: str | None = None
    payment_link_id: str | None = None  # the payment link the buyer opened, for an order made by one
    customer_email: str | None = None  # where the receipt is mailed, as the API or the buyer gave it


class SessionCreated(msgspec.Struct, kw_only=True):
    """The session-creating calls: the new session's fields beside the order."""

    order_id: str
    order_number: str
    session_id: str
    session_key: str
    checkout_url: str
    expires_at: Timestamp
    amount_due: Amount
    status: SessionStatus
    order: Order


class Execution(msgspec.Struct, kw_only=True):
    tx_hash: str
    network: str | None
    token_address: str | None


class RefundTransaction(msgspec.Struct, kw_only=True):
    """A transaction posted for a refund, and what on-chain verification made of it."""

    network: str
    tx_hash: str
    token_address: str
    status: str
    reason: str | None
    confirmations: int | None
    required: int | None
    submitted_at: Timestamp
    checked_at: Timestamp | None


class Refund(msgspec.Struct, kw_only=True):
    object: Literal["refund"] = "refund"
    refund_id: str
    order_id: str
    livemode: bool
    status: RefundStatus
    amount: Amount
    reason: str
    refund_to_address: str
    refund_network: str
    refund_token_address: str
    source: Literal["merchant", "customer"]
    metadata: dict[str, str]
    link_token: str
    # docs/spec.md §2.3 spells it so; the snake_case name is the one to read.
    link_token_camel: deprecated_alias("link_token") = msgspec.field(name="linkToken")
    status_url: str
    refund_request_token: str | None
    rejection_reason: str | None
    execution: Execution | None
    created_at: Timestamp
    updated_at: Timestamp


class RefundRead(Refund, kw_only=True):
    transactions: list[RefundTransaction]


class RefundSubmitted(Refund, kw_only=True):
    """submit-tx: the refund, and the posted transaction's verification as it stands."""

    verification: RefundTransaction


class RefundRequest(msgspec.Struct, kw_only=True):
    object: Literal["refund_request"] = "refund_request"
    token: str
    refund_url: str
    status: TokenStatus
    order_id: str
    livemode: bool
    ref_type: Literal["order_id", "order_number", "session_id", "session_key"]
    ref_value: str
    amount: Amount
    expires_at: Timestamp
    source: Literal["b2b", "dashboard", "renewal"]
    metadata: dict[str, str]
    hide_summary: bool
    hide_header: bool
    refund_id: str | None
    customer_note: str | None
    cancel_reason: str | None
    replaced_by: str | None
    created_at: Timestamp


class RefundRequestRenewed(RefundRequest, kw_only=True):
    old_token: str


class Merchant(msgspec.Struct, kw_only=True):
    object: Literal["merchant"] = "merchant"
    merchant_id: str
    name: str
    livemode: bool


class MerchantSettings(msgspec.Struct, kw_only=True):
    object: Literal["merchant_settings"] = "merchant_settings"
    merchant_id: str
    auto_approve_customer_refunds: bool
    receive_addresses: dict[str, str]
    card: CardSettings | None = None


class CardSettings(msgspec.Struct, kw_only=True):
    """The card account of the caller's mode; its secrets are never answered."""

    provider: str
    publishable_key: str
    connected: bool = True


class Event(msgspec.Struct, kw_only=True):
    """The envelope webhooks carry and the events API serves."""

    id: str
    type: str
    created_at: Timestamp
    livemode: bool
    data: dict[str, Any]


class WebhookEndpoint(msgspec.Struct, kw_only=True):
    object: Literal["webhook_endpoint"] = "webhook_endpoint"
    webhook_endpoint_id: str
    id: deprecated_alias("webhook_endpoint_id")
    url: str
    description: str | None
    enabled_events: list[str]
    status: str
    disabled_reason: str | None
    livemode: bool
    failing_since: Timestamp | None
    previous_secret_expires_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp


class WebhookEndpointWithSecret(WebhookEndpoint, kw_only=True):
    """Answers that reveal the signing secret: creation and a roll, once."""

    secret: str


class WebhookEndpointDeleted(msgspec.Struct, kw_only=True):
    object: Literal["webhook_endpoint"] = "webhook_endpoint"
    webhook_endpoint_id: str
    id: deprecated_alias("webhook_endpoint_id")
    deleted: Literal[True] = True


class DeliveryAttempt(msgspec.Struct, kw_only=True):
    number: int
    attempted_at: Timestamp
    url: str
    request_headers: dict[str, str]
    status_code: int | None
    error: str | None
    latency_ms: int | None
    response_body: str | None
    succeeded: bool


class Delivery(msgspec.Struct, kw_only=True):
    object: Literal["webhook_delivery"] = "webhook_delivery"
    delivery_id: str
    id: deprecated_alias("delivery_id")
    webhook_endpoint_id: str
    endpoint_id: deprecated_alias("webhook_endpoint_id")
    event_id: str
    event_type: str
    status: Literal["pending", "succeeded", "failed"]
    attempt_count: int
    next_attempt_at: Timestamp | None
    last_status_code: int | None
    last_error: str | None
    request_body: str
    attempts: list[DeliveryAttempt]
    created_at: Timestamp


class Redelivery(msgspec.Struct, kw_only=True):
    object: Literal["redelivery"] = "redelivery"
    webhook_endpoint_id: str
    endpoint_id: deprecated_alias("webhook_endpoint_id")
    delivery_ids: list[str]


class PaymentLink(msgspec.Struct, kw_only=True):
    """A link the merchant shares; each buyer who pays through it gets an order of their own."""

    object: Literal["payment_link"] = "payment_link"
    payment_link_id: str
    livemode: bool
    url: str  # the buyer's page on the checkout origin
    name: str
    description: str | None
    amount: Amount | None  # null: the buyer enters the amount, within min_amount and max_amount
    min_amount: Amount | None
    max_amount: Amount | None
    max_uses: int | None
    uses: int  # orders made from the link
    expires_at: Timestamp | None
    status: Literal["active", "archived"]
    # Why a buyer cannot pay through it now (archived, expired, used_up), or null while it is open.
    unavailable_reason: Literal["archived", "expired", "used_up"] | None
    orders: int
    paid_orders: int
    amount_paid: Amount
    created_at: Timestamp
    updated_at: Timestamp


def page_of(item: type) -> type:
    """A list answer of one kind of object, with its cursor."""
    return msgspec.defstruct(f"{item.__name__}List", [
        ("object", Literal["list"], "list"), ("data", list[item]), ("has_more", bool),
        ("next_cursor", str | None, None)], kw_only=True)


class ErrorDetail(msgspec.Struct, kw_only=True):
    type: Literal["invalid_request_error", "authentication_error", "permission_error", "conflict_error",
                  "rate_limit_error", "api_error"]
    code: str
    message: str
    param: str | None = None
    command_id: str | None = None
    request_id: str | None = None  # the answer's X-Request-Id


class Error(msgspec.Struct, kw_only=True):
    error: ErrorDetail
