"""Commands as the web layer would put them on a stream, for tests that drive a worker directly."""

from __future__ import annotations

import secrets
from datetime import timedelta

from actors import batch
from actors import messages as m
from common.clock import utcnow


def create_order(merchant_id: str, order_id: str | None = None) -> m.Envelope:
    """A new order of 1.00 USD with its session, under a fresh command id."""
    now = utcnow()
    create = m.CreateOrder(order_id=order_id or f"ord_{secrets.token_hex(12)}", merchant_id=merchant_id,
                           livemode=False, at=now, amount=1_000_000,
                           session=m.NewSession(session_id=f"cs_{secrets.token_hex(12)}",
                                                session_key=f"cs_test_{secrets.token_hex(24)}",
                                                expires_at=now + timedelta(minutes=5)))
    return m.Envelope(command_id=f"cmd_{secrets.token_hex(12)}", command=create)


def make_core_raise(monkeypatch, order_id: str, message: str) -> None:
    """The order core raises RuntimeError(message) on this order's commands, as a bug meeting one record
    would; `monkeypatch.undo()` deploys the fix."""
    decide = batch.decide

    def raising(current, cmd):
        if cmd.order_id == order_id:
            raise RuntimeError(message)
        return decide(current, cmd)

    monkeypatch.setattr(batch, "decide", raising)
