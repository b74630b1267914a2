"""The life-cycle states of docs/spec.md §3: the same words in the order core, its views and the public API."""

from __future__ import annotations

from enum import Enum


class OrderStatus(str, Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    PARTIAL_PAID = "PARTIAL_PAID"
    CANCELED = "CANCELED"
    REFUNDED = "REFUNDED"
    PARTIALLY_REFUNDED = "PARTIALLY_REFUNDED"


class SessionStatus(str, Enum):
    OPEN = "OPEN"
    COMPLETED = "COMPLETED"
    EXPIRED = "EXPIRED"
    SUPERSEDED = "SUPERSEDED"
    CANCELED = "CANCELED"


class RefundStatus(str, Enum):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    EXECUTED = "EXECUTED"


class TokenStatus(str, Enum):
    ACTIVE = "ACTIVE"
    SUBMITTED = "SUBMITTED"
    EXPIRED_UNUSED = "EXPIRED_UNUSED"
    CANCELED = "CANCELED"
    RENEWAL_REQUESTED = "RENEWAL_REQUESTED"
    RENEWED = "RENEWED"
