"""Records the histories the replay test holds the code to: `python -m tests.histories.record`.

Each flow runs commands through the pure core and writes `<flow>.json`: the events exactly as the
event store keeps them, the state they rebuild, and the schema versions both were written in.
Re-record only for a deliberate change of behaviour; a change of stored shape bumps the schema and
adds an upcaster (actors/schema.py), and the histories recorded before it must still replay.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec

from actors import messages as m
from actors import schema
from actors.order import run

HERE = Path(__file__).resolve().parent
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
ORDER = dict(order_id="ord_hist", merchant_id="mer_hist", livemode=False)
USDC = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
BUYER = "0x52908400098527886E0F7030069857D2E4169EE7"
DESTINATION = m.Destination(refund_to_address=BUYER, refund_network="sepolia", refund_token_address=USDC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def session(n: int, ttl: int = 1800) -> m.NewSession:
    return m.NewSession(session_id=f"cs_hist{n}", session_key=f"cs_test_hist{n}", expires_at=at(ttl))


def payment(n: int, amount: int, seconds: int) -> m.ConfirmPayment:
    return m.ConfirmPayment(**ORDER, at=at(seconds), payment_id=f"pay_hist{n}", network="sepolia",
                            tx_hash=f"0x{n:064x}", token_address=USDC, amount=amount)


def refund(n: int, amount: int, seconds: int, flow: str = "merchant", token: str | None = None) -> m.CreateRefund:
    return m.CreateRefund(**ORDER, at=at(seconds), refund_id=f"re_hist{n}", link_token=f"rl_hist{n}", amount=amount,
                          reason="damaged", destination=DESTINATION, flow=flow, token=token)


def executed(n: int, seconds: int) -> m.ConfirmRefundTransfer:
    return m.ConfirmRefundTransfer(**ORDER, at=at(seconds), refund_id=f"re_hist{n}", network="sepolia",
                                   tx_hash=f"0x{n + 100:064x}", token_address=USDC)


FLOWS: dict[str, list[m.Command]] = {
    "paid_then_refunded_in_two_parts": [
        m.CreateOrder(**ORDER, at=at(0), order_number=1001, amount=25_000_000, session=session(1),
                      line_items=(m.LineItem("Tea", 2, 10_000_000), m.LineItem("Cup", 1, 5_000_000)),
                      external_ref="shop-1"),
        payment(1, 25_000_000, 60),
        refund(1, 5_000_000, 120),
        m.SubmitRefundTx(**ORDER, at=at(150), refund_id="re_hist1", network="sepolia", tx_hash=f"0x{7:064x}",
                         token_address=USDC),
        m.FailRefundTx(**ORDER, at=at(160), refund_id="re_hist1", network="sepolia", tx_hash=f"0x{7:064x}",
                       reason="sent to another address"),
        executed(1, 180),
        refund(2, 20_000_000, 240),
        executed(2, 300),
    ],
    "underpaid_then_residual_session": [
        m.CreateOrder(**ORDER, at=at(0), order_number=1002, amount=10_000_000, session=session(1)),
        payment(1, 4_000_000, 60),
        m.OpenSession(**ORDER, at=at(90), session=session(2, 3600), amount_due=6_000_000),
        payment(2, 6_000_000, 120),
    ],
    "token_expired_renewed_and_used": [
        m.CreateOrder(**ORDER, at=at(0), order_number=1003, amount=10_000_000, session=session(1)),
        payment(1, 10_000_000, 60),
        m.MintRefundToken(**ORDER, at=at(100), token="rfqt_hist1", ref_type="order_number", ref_value="1003",
                          amount=4_000_000, expires_at=at(1900), source="b2b"),
        m.ExpireRefundToken(**ORDER, at=at(1900), token="rfqt_hist1"),
        m.RequestTokenRenewal(**ORDER, at=at(2000), token="rfqt_hist1", customer_note="I was travelling"),
        m.ApproveTokenRenewal(**ORDER, at=at(2100), token="rfqt_hist1", new_token="rfqt_hist2", expires_at=at(3900)),
        refund(1, 3_000_000, 2200, flow="customer", token="rfqt_hist2"),
        m.RejectRefund(**ORDER, at=at(2300), refund_id="re_hist1", reason="outside the policy"),
    ],
    "timed_out_reopened_then_canceled": [
        m.CreateOrder(**ORDER, at=at(0), order_number=1004, amount=3_000_000, session=session(1, 60)),
        m.ExpireSession(**ORDER, at=at(60), session_id="cs_hist1"),
        m.ReopenOrder(**ORDER, at=at(600), session=session(2, 1200)),
        m.CancelOrder(**ORDER, at=at(700), note="buyer phoned"),
    ],
}


def record(commands: list[m.Command]) -> dict:
    order, events = None, []
    for command in commands:
        order, appended = run(order, command)
        events += appended
    return {"events": [as_stored(e) for e in events], "state": as_stored(order),
            "schema": {"events": schema.EVENTS.current, "state": schema.SNAPSHOTS.current}}


def as_stored(value: msgspec.Struct) -> dict:
    """The JSON the event store and the orders table hold, as plain data."""
    return json.loads(msgspec.json.encode(value))


if __name__ == "__main__":
    for name, commands in FLOWS.items():
        (HERE / f"{name}.json").write_text(json.dumps(record(commands), indent=1, sort_keys=True) + "\n")
        print(f"recorded {name}.json")
