"""Server library for merchant backends of the checkout, orders and refunds service (B2B API v1)."""

from .client import AsyncClient, Client
from .downloads import AsyncDownload, Download
from .errors import (
    ApiError,
    AuthenticationError,
    ConflictError,
    ConnectionFailed,
    DecodeError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceError,
    WebhookVerificationError,
)
from .models import (
    ApiObject,
    AuditEvent,
    Event,
    InvitationCreated,
    Order,
    OrderExportRow,
    PaymentExportRow,
    PaymentLink,
    QuickSession,
    Refund,
    RefundExportRow,
    RefundRequest,
    ResponseInfo,
    StaffMember,
    WebhookEndpoint,
)
from .operations import OPERATIONS, Op
from .version import API_VERSION, VERSION
from .webhooks import standard_webhooks_secret, verify_webhook

__all__ = [
    "API_VERSION", "OPERATIONS", "VERSION", "ApiError", "ApiObject", "AsyncClient", "AsyncDownload", "AuditEvent",
    "AuthenticationError", "Client", "ConflictError", "ConnectionFailed", "DecodeError", "Download", "Event",
    "InvalidRequestError", "InvitationCreated", "NotFoundError", "Op", "Order", "OrderExportRow", "PaymentExportRow",
    "PaymentLink", "PermissionDeniedError", "QuickSession", "RateLimitError", "Refund", "RefundExportRow",
    "RefundRequest", "ResponseInfo", "ServerError", "ServiceError", "StaffMember", "WebhookEndpoint",
    "WebhookVerificationError", "standard_webhooks_secret", "verify_webhook",
]
