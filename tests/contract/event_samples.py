"""One event of every type, made by the pure core from a fixed scenario, in its public form: what webhooks carry.

    python -m tests.contract.event_samples   # re-record tests/contract/events.json, for a deliberate change only
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec

from actors import messages as m
from actors.order import decide
from actors.publication import publish, transition

SAMPLES = Path(__file__).with_name("events.json")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
DEST = m.Destination("0x1111111111111111111111111111111111111111", "ethereum",
                     "0xdAC17F958D2ee523a2206206994597C13D831ec7")


def _at(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def _session(n: int, at: datetime) -> m.NewSession:
    return m.NewSession(session_id=f"cs_s{n}", session_key=f"cs_test_k{n}", expires_at=at + timedelta(minutes=30),
                        success_url="https://shop.example/done", cancel_url=None)


def _scenario(order_id: str) -> list[m.Command]:
    """Commands that, on three orders, make every event type at least once."""
    base = dict(order_id=order_id, merchant_id="mer_sample", livemode=False)

    def c(kind, n, **fields):
        return kind(**base, at=_at(n), **fields)

    create = c(m.CreateOrder, 0, order_number=1001, amount=10_000_000, external_ref="ERP-1",
               line_items=(m.LineItem("Tea", 2, 5_000_000),), metadata={"channel": "web"}, session=_session(1, _at(0)),
               receipt_url=f"https://pay.example/receipts/rcpt_0123456789abcdef0123456789abcdef_{order_id}")
    pay = dict(network="ethereum", token_address=DEST.refund_token_address)
    if order_id == "ord_a":  # paid in two parts, refunds in every state, tokens in every state
        return [
            create, c(m.OpenSession, 1, session=_session(2, _at(1))),
            c(m.ConfirmPayment, 2, payment_id="pay_a1", tx_hash="0xa1", amount=4_000_000, **pay),
            c(m.ConfirmPayment, 3, payment_id="pay_a2", tx_hash="0xa2", amount=6_000_000, **pay),
            c(m.CreateRefund, 4, refund_id="re_a1", link_token="rl_a1", amount=1_000_000, reason="damaged",
              destination=DEST, flow="merchant"),
            c(m.SubmitRefundTx, 5, refund_id="re_a1", tx_hash="0xr1", **pay),
            c(m.FailRefundTx, 6, refund_id="re_a1", network="ethereum", tx_hash="0xr1", reason="wrong amount"),
            c(m.ConfirmRefundTransfer, 7, refund_id="re_a1", tx_hash="0xr2", **pay),
            c(m.CreateRefund, 8, refund_id="re_a2", link_token="rl_a2", amount=500_000, reason="", destination=DEST,
              flow="customer"),
            c(m.ApproveRefund, 9, refund_id="re_a2"), c(m.CancelRefund, 10, refund_id="re_a2"),
            c(m.CreateRefund, 11, refund_id="re_a3", link_token="rl_a3", amount=500_000, reason="", destination=DEST,
              flow="customer"),
            c(m.RejectRefund, 12, refund_id="re_a3", reason="not ours"),
            c(m.MintRefundToken, 13, token="rfqt_a1", ref_type="order_id", ref_value=order_id, amount=2_000_000,
              expires_at=_at(43), source="b2b", metadata={"ticket": "T-9"}),
            c(m.CreateRefund, 14, refund_id="re_a4", link_token="rl_a4", amount=1_500_000, reason="late",
              destination=DEST, flow="customer", note="please hurry", token="rfqt_a1"),
            c(m.MintRefundToken, 15, token="rfqt_a2", ref_type="order_number", ref_value="1001", amount=None,
              expires_at=_at(16), source="dashboard"),
            c(m.ExpireRefundToken, 17, token="rfqt_a2"),
            c(m.RequestTokenRenewal, 18, token="rfqt_a2", customer_note="missed it"),
            c(m.ApproveTokenRenewal, 19, token="rfqt_a2", new_token="rfqt_a3", expires_at=_at(49)),
            c(m.CancelRefundToken, 20, token="rfqt_a3", reason="resolved by phone"),
        ]
    if order_id == "ord_b":  # underpaid, then accepted as paid
        return [create, c(m.ConfirmPayment, 2, payment_id="pay_b1", tx_hash="0xb1", amount=9_000_000, **pay),
                c(m.ResolveOrder, 3)]
    if order_id == "ord_d":  # paid by card; a card refund the provider refused, retried, then executed
        card = m.Destination("", "card", "")
        return [create, c(m.ConfirmPayment, 2, payment_id="pay_d1", network="card", tx_hash="pi_d1", token_address="",
                          amount=10_000_000),
                c(m.CreateRefund, 3, refund_id="re_d1", link_token="rl_d1", amount=2_000_000, reason="",
                  destination=card, flow="merchant"),
                c(m.RecordCardRefund, 4, refund_id="re_d1", provider_refund_id="", status="failed",
                  reason="charge disputed"),
                c(m.RetryRefund, 5, refund_id="re_d1"),
                c(m.RecordCardRefund, 6, refund_id="re_d1", provider_refund_id="re_stripe_d1", status="succeeded",
                  attempt=1)]
    return [create, c(m.ExpireSession, 31, session_id="cs_s1"), c(m.ReopenOrder, 32, session=_session(3, _at(32))),
            c(m.CancelOrder, 33, note="customer left")]


def samples() -> dict[str, dict]:
    """The public envelope of the first event of each type, by type."""
    found: dict[str, dict] = {}
    for order_id in ("ord_a", "ord_b", "ord_c", "ord_d"):
        order = None
        for n, cmd in enumerate(_scenario(order_id)):
            moves = transition(order, decide(order, cmd))
            for k, (event, order, order_status) in enumerate(moves):
                public = publish(f"evt_{order_id}_{n}_{k}", order.version, event, order, order_status)
                envelope = {"id": public.id, "type": public.type, "created_at": public.created_at,
                            "livemode": public.livemode, "data": public.data}
                found.setdefault(public.type, json.loads(msgspec.json.encode(envelope)))
    return dict(sorted(found.items()))


if __name__ == "__main__":
    SAMPLES.write_text(json.dumps(samples(), indent=1) + "\n")
    print(f"wrote {SAMPLES}")
