"""The order's domain rules (what it still owes, what may be refunded, whether a card refund waits for the
provider, a token's status at a time) and its finders: mixins over the fields the state and its view share, so
each rule is written once, in the core."""

from __future__ import annotations

from datetime import datetime

from actors.statuses import RefundStatus, SessionStatus, TokenStatus

# The network name of the card rail: a payment or refund on it went through the merchant's card provider.
CARD = "card"


class OrderRules:
    __slots__ = ()

    @property
    def residual(self) -> int:
        return max(self.amount_owed - self.amount_paid, 0)

    @property
    def refundable(self) -> int:
        """Paid minus every refund not REJECTED (pending, approved and executed all hold money)."""
        held = sum(r.amount for r in self.refunds if r.status is not RefundStatus.REJECTED)
        return max(self.amount_paid - held, 0)

    @property
    def refundable_by_card(self) -> int:
        """What card refunds may still return: paid by card minus card refunds not REJECTED, within refundable."""
        paid = sum(p.amount for p in self.payments if p.network == CARD)
        held = sum(r.amount for r in self.refunds if r.refund_network == CARD and r.status is not RefundStatus.REJECTED)
        return min(max(paid - held, 0), self.refundable)

    def live_session(self):
        return next((s for s in reversed(self.sessions) if s.status is SessionStatus.OPEN), None)

    def refund(self, refund_id: str):
        return next((r for r in self.refunds if r.refund_id == refund_id), None)

    def token(self, token: str):
        return next((t for t in self.tokens if t.token == token), None)


class RefundRules:
    __slots__ = ()

    def attempt(self, network: str, tx_hash: str):
        return next((a for a in self.attempts if (a.network, a.tx_hash) == (network, tx_hash)), None)

    @property
    def card_attempt_due(self) -> int | None:
        """The number of the provider call an APPROVED card refund waits for: 0 first, one more per retry; None
        while a call is out (pending at the provider), after a refusal until retried, or once executed."""
        if self.refund_network != CARD or self.status is not RefundStatus.APPROVED:
            return None
        if any(a.status == "verifying" for a in self.attempts):
            return None
        failed = sum(1 for a in self.attempts if a.status == "failed")
        return self.retries if failed <= self.retries else None

    @property
    def awaits_provider(self) -> bool:
        """An APPROVED card refund with a provider call due or still pending at the provider."""
        return self.refund_network == CARD and self.status is RefundStatus.APPROVED and (
            self.card_attempt_due is not None or any(a.status == "verifying" for a in self.attempts))


class TokenRules:
    __slots__ = ()

    def status_at(self, now: datetime) -> TokenStatus:
        """The status a reader sees: an ACTIVE token past its expiry is expired even before the sweep ran."""
        if self.status is TokenStatus.ACTIVE and now >= self.expires_at:
            return TokenStatus.EXPIRED_UNUSED
        return self.status
