"""The state of one order aggregate: the Order with its sessions, payments, refunds and tokens."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

import msgspec

from actors import messages as m


class OrderStatus(str, Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    PARTIAL_PAID = "PARTIAL_PAID"
    CANCELED = "CANCELED"
    REFUNDED = "REFUNDED"
    PARTIALLY_REFUNDED = "PARTIALLY_REFUNDED"


# Every struct here is frozen data decoded from or encoded to JSON and can never be part of a reference
# cycle, so none is tracked by the garbage collector (gc=False): an actor worker holds up to 50,000
# orders in memory, and full collections walking them all paused it for tens of milliseconds.


class SessionStatus(str, Enum):
    OPEN = "OPEN"
    COMPLETED = "COMPLETED"
    EXPIRED = "EXPIRED"
    SUPERSEDED = "SUPERSEDED"
    CANCELED = "CANCELED"


class Session(msgspec.Struct, frozen=True, gc=False):
    session_id: str
    session_key: str
    amount_due: int
    expires_at: datetime
    created_at: datetime
    status: SessionStatus = SessionStatus.OPEN
    success_url: str | None = None
    cancel_url: str | None = None


class Payment(msgspec.Struct, frozen=True, gc=False):
    payment_id: str
    network: str
    tx_hash: str
    token_address: str
    amount: int
    received_at: datetime
    session_id: str | None = None
    late: bool = False


class RefundStatus(str, Enum):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    EXECUTED = "EXECUTED"


class TxAttempt(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """A transaction the merchant posted for a refund, and what verification made of it."""

    network: str
    tx_hash: str
    token_address: str
    submitted_at: datetime
    status: str = "verifying"  # verifying, failed, executed
    reason: str | None = None


class Refund(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    refund_id: str
    link_token: str
    amount: int
    reason: str
    refund_to_address: str
    refund_network: str
    refund_token_address: str
    source: str  # "merchant" or "customer"
    created_at: datetime
    updated_at: datetime
    status: RefundStatus = RefundStatus.PENDING
    note: str | None = None
    token: str | None = None  # the refund-request token it was submitted through
    rejection_reason: str | None = None
    executed_tx_hash: str | None = None
    executed_network: str | None = None
    executed_token_address: str | None = None
    attempts: tuple[TxAttempt, ...] = ()

    def attempt(self, network: str, tx_hash: str) -> TxAttempt | None:
        return next((a for a in self.attempts if (a.network, a.tx_hash) == (network, tx_hash)), None)


class TokenStatus(str, Enum):
    ACTIVE = "ACTIVE"
    SUBMITTED = "SUBMITTED"
    EXPIRED_UNUSED = "EXPIRED_UNUSED"
    CANCELED = "CANCELED"
    RENEWAL_REQUESTED = "RENEWAL_REQUESTED"
    RENEWED = "RENEWED"


class RefundToken(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    token: str
    ref_type: str
    ref_value: str
    amount: int  # the ceiling a buyer may ask for
    expires_at: datetime
    created_at: datetime
    source: str  # b2b, dashboard or renewal
    status: TokenStatus = TokenStatus.ACTIVE
    metadata: dict[str, str] = {}
    hide_summary: bool = False
    hide_header: bool = False
    refund_id: str | None = None
    customer_note: str | None = None
    cancel_reason: str | None = None
    replaced_by: str | None = None

    def status_at(self, now: datetime) -> TokenStatus:
        """The status a reader sees: an ACTIVE token past its expiry is expired even before the sweep ran."""
        if self.status is TokenStatus.ACTIVE and now >= self.expires_at:
            return TokenStatus.EXPIRED_UNUSED
        return self.status


class Order(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    order_id: str
    merchant_id: str
    livemode: bool
    order_number: int
    amount_owed: int
    created_at: datetime
    updated_at: datetime
    status: OrderStatus = OrderStatus.PENDING
    amount_paid: int = 0
    amount_refunded: int = 0
    line_items: tuple[m.LineItem, ...] = ()
    external_ref: str | None = None
    metadata: dict[str, str] = {}
    sessions: tuple[Session, ...] = ()
    payments: tuple[Payment, ...] = ()
    version: int = 0

    @property
    def residual(self) -> int:
        return max(self.amount_owed - self.amount_paid, 0)

    refunds: tuple[Refund, ...] = ()
    tokens: tuple[RefundToken, ...] = ()

    def live_session(self) -> Session | None:
        return next((s for s in reversed(self.sessions) if s.status is SessionStatus.OPEN), None)

    @property
    def refundable(self) -> int:
        """Paid minus every refund not REJECTED (pending, approved and executed all hold money)."""
        held = sum(r.amount for r in self.refunds if r.status is not RefundStatus.REJECTED)
        return max(self.amount_paid - held, 0)

    def refund(self, refund_id: str) -> Refund | None:
        return next((r for r in self.refunds if r.refund_id == refund_id), None)

    def token(self, token: str) -> RefundToken | None:
        return next((t for t in self.tokens if t.token == token), None)
