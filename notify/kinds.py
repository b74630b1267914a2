"""The kinds of notification, who may and who by default does get each, and the notice an event makes (pure)."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from typing import NamedTuple

import msgspec

from accounts.roles import Can, allows
from common.clock import iso
from common.network_names import network_name


class Kind(Enum):
    REFUND_REQUESTED = "refund_requested"  # a buyer's refund request waits for review
    REFUND_EXECUTED = "refund_executed"
    PAYMENT_RECEIVED = "payment_received"
    WEBHOOK_FAILING = "webhook_failing"  # an endpoint failing for over an hour
    CARD_ACCOUNT_ERROR = "card_account_error"  # the card provider refused the merchant's account


class Rule(NamedTuple):
    label: str
    needs: Can  # a user whose role cannot act on it is never told of it, whatever they chose
    default_roles: frozenset[str]


RULES: dict[Kind, Rule] = {
    Kind.REFUND_REQUESTED: Rule("A buyer's refund request waits for review", Can.REFUND,
                                frozenset({"owner", "manager"})),
    Kind.REFUND_EXECUTED: Rule("A refund was executed", Can.REFUND, frozenset({"owner", "manager"})),
    Kind.PAYMENT_RECEIVED: Rule("A payment was received", Can.SEE_ORDERS, frozenset({"owner", "manager"})),
    Kind.WEBHOOK_FAILING: Rule("A webhook endpoint has been failing for over an hour", Can.CONFIGURE,
                               frozenset({"owner"})),
    Kind.CARD_ACCOUNT_ERROR: Rule("The card provider reports an error with the card account", Can.CONFIGURE,
                                  frozenset({"owner"})),
}


def wanted(role: str, kind: Kind, choice: bool | None) -> bool:
    """Whether a user of `role` who chose `choice` (None: never chose) hears of `kind`."""
    if not allows(role, RULES[kind].needs):
        return False
    return role in RULES[kind].default_roles if choice is None else choice


def offered(role: str) -> list[Kind]:
    """The kinds a user of this role may choose from in their settings."""
    return [kind for kind, rule in RULES.items() if allows(role, rule.needs)]


class Notice(NamedTuple):
    kind: Kind
    source_id: str  # what it tells of, once: an event id, or an endpoint's failing episode
    merchant_id: str
    livemode: bool
    title: str
    body: str  # plain text, shown and mailed as text only
    path: str  # under the dashboard's prefix
    # A refund request is told only while that refund still waits for review: one the merchant's standing choice
    # approved in the same breath was PENDING only between two events of one transition (notify/store.py).
    pending_refund_id: str | None = None


class EventFacts(msgspec.Struct, kw_only=True):
    """The fields of an event's data a notice tells (read off the events stream, where data is plain JSON)."""

    order_id: str
    order_number: str
    amount: str | None = None
    refund_id: str | None = None
    refund_status: str | None = None
    source: str | None = None  # payment.refund.requested: "merchant" or "customer"
    reason: str | None = None
    note: str | None = None
    network: str | None = None
    refund_network: str | None = None


def _on(network: str | None) -> str:
    return f" on {network_name(network)}" if network else ""


def from_event(event_id: str, event_type: str, merchant_id: str, livemode: bool, data: object) -> Notice | None:
    """The notice an event of the stream makes, if any."""
    if event_type not in ("payment.refund.requested", "payment.refund.executed", "payment.received"):
        return None
    facts = msgspec.convert(data, EventFacts)
    mode = "live" if livemode else "test"
    order = f"order #{facts.order_number}"
    if event_type == "payment.refund.requested":
        if facts.source != "customer" or facts.refund_status != "PENDING":
            return None  # issued by the merchant (approved at once): no buyer asks, nothing waits for review
        lines = [f"A buyer asks for a refund of {facts.amount} USD for {order}.", f"Reason: {facts.reason or '-'}"]
        if facts.note:
            lines.append(f"The buyer's note: {facts.note}")
        return Notice(Kind.REFUND_REQUESTED, event_id, merchant_id, livemode,
                      f"Refund request for {order} waits for review", "\n".join(lines), f"/{mode}/review",
                      pending_refund_id=facts.refund_id)
    if event_type == "payment.refund.executed":
        return Notice(Kind.REFUND_EXECUTED, event_id, merchant_id, livemode, f"Refund for {order} executed",
                      f"The refund of {facts.amount} USD for {order} was executed{_on(facts.refund_network)}.",
                      f"/{mode}/refunds/{facts.refund_id}")
    return Notice(Kind.PAYMENT_RECEIVED, event_id, merchant_id, livemode, f"Payment received for {order}",
                  f"{facts.amount} USD arrived for {order}{_on(facts.network)}.", f"/{mode}/orders/{facts.order_id}")


def webhook_failing(endpoint_id: str, merchant_id: str, livemode: bool, url_host: str, since: str) -> Notice:
    mode = "live" if livemode else "test"
    return Notice(Kind.WEBHOOK_FAILING, f"{endpoint_id}:{since}", merchant_id, livemode,
                  "A webhook endpoint has been failing for over an hour",
                  f"Deliveries to the endpoint {endpoint_id} ({url_host}) have failed since {since}. They are retried;"
                  " after three days of failures the endpoint is disabled.", f"/{mode}/settings")


def card_account_error(account_id: str, merchant_id: str, livemode: bool, provider: str, error: str,
                       since: datetime) -> Notice:
    # The episode's start to the microsecond: an error ended by a call that worked may come back within a second.
    mode = "live" if livemode else "test"
    return Notice(Kind.CARD_ACCOUNT_ERROR, f"{account_id}:{since.astimezone(timezone.utc).isoformat()}", merchant_id,
                  livemode, f"The card provider refuses the {mode} card account",
                  f"Since {iso(since)} {provider.capitalize()} refuses the {mode} card account's keys: {error}\n"
                  "Card payments and card refunds fail until it is fixed: check the account and its keys with the"
                  " provider, then connect it again in the dashboard's settings. Refunds it refused can be retried.",
                  f"/{mode}/settings")
