"""A rail's report that money arrived, as the one command (and command id) every rail sends for it.

Chain watchers and the card provider's webhook both confirm payments through here: the id follows from the
network and the rail's own payment id alone, so any number of reports of one payment apply it once.
"""

from __future__ import annotations

from datetime import datetime

from actors import messages as m
from common.ids import derived_id


def payment_confirmed(*, order_id: str, merchant_id: str, livemode: bool, at: datetime, network: str, tx_hash: str,
                      token_address: str, amount: int, session_id: str | None, card_brand: str = "",
                      card_last4: str = "") -> m.Envelope:
    key = f"{network}:{tx_hash}"
    command = m.ConfirmPayment(
        order_id=order_id, merchant_id=merchant_id, livemode=livemode, at=at,
        payment_id=derived_id("pay", key, "payment"), network=network, tx_hash=tx_hash,
        token_address=token_address, amount=amount, session_id=session_id, card_brand=card_brand,
        card_last4=card_last4,
    )
    return m.Envelope(command_id=f"watch:payment:{key}", command=command)
