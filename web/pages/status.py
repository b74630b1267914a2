"""The buyer-facing status of a checkout: a pure function of the order, the session, attempts and the time.

It shows what a buyer may see and nothing else: no order id, merchant id, metadata or external_ref.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from actors.statuses import OrderStatus, SessionStatus
from actors.views import OrderView, SessionView
from common import money
from common.clock import iso
from web.pages.session import Attempt

SETTLED = {OrderStatus.PAID, OrderStatus.REFUNDED, OrderStatus.PARTIALLY_REFUNDED}
PAYABLE = {"waiting", "confirming", "partially_paid"}  # the states in which the page offers ways to pay
UNVERIFIED = {"reported", "confirming"}  # attempts the chain watchers have not settled either way


def state(order: OrderView, session: SessionView, attempts: tuple[Attempt, ...], now: datetime) -> str:
    if session.status is SessionStatus.COMPLETED or order.status in SETTLED:
        return "paid"
    if session.status is SessionStatus.SUPERSEDED:
        return "superseded"
    if order.status is OrderStatus.CANCELED and order.metadata.get("canceled_reason") != "payment_timeout":
        return "canceled"
    # The scheduler sweeps due sessions every second or so; the page does not wait for it.
    if session.status is not SessionStatus.OPEN or order.status is OrderStatus.CANCELED or now >= session.expires_at:
        return "expired"
    if any(a.status in UNVERIFIED for a in attempts):
        return "confirming"
    return "partially_paid" if order.status is OrderStatus.PARTIAL_PAID else "waiting"


def status_json(order: OrderView, session: SessionView, attempts: tuple[Attempt, ...], now: datetime,
                required: Callable[[str], int | None], receipt_url: str | None = None) -> dict:
    """`required(network)` is the confirmation depth the registry asks of that network; `receipt_url` is shown
    once the checkout is paid."""
    current = state(order, session, attempts, now)
    confirmations = None
    if current == "confirming":
        latest = next(a for a in reversed(attempts) if a.status in UNVERIFIED)
        # n stays null until the chain watchers report a depth; the page then shows "n of m".
        confirmations = {"network": latest.network, "n": latest.confirmations, "m": required(latest.network)}
    return {
        "state": current,
        "amount_due": money.format(order.residual if current != "paid" else 0),
        "amount_paid": money.format(order.amount_paid),
        "currency": "USD",
        "expires_at": iso(session.expires_at),
        "now": iso(now),
        "confirmations": confirmations,
        "receipt_url": receipt_url if current == "paid" else None,
    }
