"""What a verified provider event means for an order: a confirmed payment or a refund's outcome, as the command
the order's actor applies, or nothing (another merchant's payment, another mode, a kind the service ignores)."""

from __future__ import annotations

from datetime import datetime

from actors import confirmations
from actors import messages as m
from actors.rules import CARD
from cards import amounts
from cards.provider import EventFact, RefundFact


def _ours(metadata: dict[str, str], merchant_id: str, livemode: bool) -> bool:
    """The provider sends every event of an account to every endpoint: only the service's own objects of this
    merchant and mode, which carry both in their metadata, are this endpoint's."""
    return metadata.get("merchant_id") == merchant_id and metadata.get("livemode") == ("true" if livemode else "false")


def refund_reported(fact: RefundFact, order_id: str, merchant_id: str, livemode: bool, at: datetime, *,
                    refund_id: str, attempt: int) -> m.Envelope:
    """One command id per provider refund and status: a status reported again (by the webhook and the service's
    own call, or a redelivery) is answered from the record."""
    name = fact.refund_id or f"refused:{refund_id}:{attempt}"
    command = m.RecordCardRefund(order_id=order_id, merchant_id=merchant_id, livemode=livemode, at=at,
                                 refund_id=refund_id, provider_refund_id=fact.refund_id, status=fact.status,
                                 attempt=attempt, reason=fact.reason)
    return m.Envelope(command_id=f"card:refund:{name}:{fact.status}", command=command)


def command_of(fact: EventFact, merchant_id: str, livemode: bool, at: datetime) -> m.Envelope | None:
    if fact.payment is not None:
        p = fact.payment
        if not _ours(p.metadata, merchant_id, livemode) or "order_id" not in p.metadata or p.currency != "usd":
            return None
        return confirmations.payment_confirmed(
            order_id=p.metadata["order_id"], merchant_id=merchant_id, livemode=livemode, at=at, network=CARD,
            tx_hash=p.payment_id, token_address="", amount=amounts.micros(p.amount_cents),
            session_id=p.metadata.get("session_id"), card_brand=p.card_brand, card_last4=p.card_last4)
    if fact.refund is not None:
        r = fact.refund
        if not _ours(r.metadata, merchant_id, livemode) or "order_id" not in r.metadata \
                or "refund_id" not in r.metadata or not r.metadata.get("attempt", "").isdigit():
            return None
        return refund_reported(r, r.metadata["order_id"], merchant_id, livemode, at,
                               refund_id=r.metadata["refund_id"], attempt=int(r.metadata["attempt"]))
    return None
