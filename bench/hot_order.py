"""`python bench/hot_order.py`: what one more refund of an order costs the actor, as the order's refunds gather.

One paid order takes merchant refunds of 0.01, one command each, through the worker's own path: `decide_command`
(the core, the public events, the reply and the state as JSON) and `store.batch_rows` (the rows its commit writes).
Printed at the 1st, 10th, 100th and 1,000th refund: the actor's CPU for that command (the median of the commands
around it, in microseconds), the bytes of its reply, of the order's JSON it writes, and of its events. No database
and no Redis: the Python a worker spends per refund, and the bytes it hands PostgreSQL and Redis.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import timedelta

from actors import batch, store
from actors import messages as m
from common.clock import utcnow

MERCHANT = "mer_hot"
DESTINATION = m.Destination(refund_to_address="0x" + "ab" * 20, refund_network="base",
                            refund_token_address="0x" + "cd" * 20)


def _paid_order():
    now = utcnow()
    create = m.CreateOrder(order_id="ord_hot", merchant_id=MERCHANT, livemode=False, at=now, amount=1_000_000_000,
                           order_number=1001,
                           session=m.NewSession(session_id="cs_hot", session_key="cs_test_hot",
                                                expires_at=now + timedelta(minutes=30)))
    _, order, _ = batch.decide_command("cmd_create", "", create, None)
    pay = m.ConfirmPayment(order_id="ord_hot", merchant_id=MERCHANT, livemode=False, at=now, payment_id="pay_hot",
                           network="base", tx_hash="0x" + "01" * 32, token_address=DESTINATION.refund_token_address,
                           amount=1_000_000_000, session_id="cs_hot")
    _, order, _ = batch.decide_command("cmd_pay", "", pay, order)
    return order


def _refund(n: int) -> m.CreateRefund:
    return m.CreateRefund(order_id="ord_hot", merchant_id=MERCHANT, livemode=False, at=utcnow(),
                          refund_id=f"re_{n:08d}", link_token=f"rl_{n:08d}", amount=10_000, reason="hot order",
                          destination=DESTINATION, flow="merchant")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refunds", type=int, default=1_000)
    args = parser.parse_args()
    order = _paid_order()
    marks = [n for n in (1, 10, 100, 1_000, 10_000) if n <= args.refunds]
    spent: list[float] = []
    print(f"{'refund':>7} {'actor us':>9} {'reply B':>8} {'state B':>8} {'events B':>9} {'rows':>5}")
    for n in range(1, args.refunds + 1):
        started = time.process_time()
        outcome, after, state_json = batch.decide_command(f"cmd_{n:08d}", "", _refund(n), order)
        rows = store.batch_rows([outcome], {after.order_id: after}, {after.order_id: state_json}, [],
                                {order.order_id: order})
        spent.append(time.process_time() - started)
        assert outcome.appended, outcome.reply
        if n in marks:
            around = spent[max(0, n - 5):n + 5] if n > 1 else spent[:1]
            written = sum(len(given) for given in rows.values())
            print(f"{n:>7} {statistics.median(around) * 1e6:>9.0f} {len(outcome.reply):>8} {len(state_json):>8}"
                  f" {sum(len(a.payload) for a in outcome.appended):>9} {written:>5}")
        order = after



if __name__ == "__main__":
    main()
