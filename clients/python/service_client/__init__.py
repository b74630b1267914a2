"""Server library for merchant backends of the checkout, orders and refunds service (B2B API v1)."""

from .client import AsyncClient, Client
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
from .models import ApiObject, Event, Order, QuickSession, Refund, RefundRequest, ResponseInfo, WebhookEndpoint
from .operations import OPERATIONS, Op
from .version import API_VERSION, VERSION
from .webhooks import standard_webhooks_secret, verify_webhook

__all__ = [
    "API_VERSION", "OPERATIONS", "VERSION", "ApiError", "ApiObject", "AsyncClient", "AuthenticationError", "Client",
    "ConflictError", "ConnectionFailed", "DecodeError", "Event", "InvalidRequestError", "NotFoundError", "Op",
    "Order", "PermissionDeniedError", "QuickSession", "RateLimitError", "Refund", "RefundRequest", "ResponseInfo",
    "ServerError", "ServiceError", "WebhookEndpoint", "WebhookVerificationError", "standard_webhooks_secret",
    "verify_webhook",
]
