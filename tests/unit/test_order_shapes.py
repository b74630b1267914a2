"""The order has two shapes: the actor's state (actors/state.py) and the read view every reader and reply uses
(actors/views.py), mapped by one function (actors/views.view_of). Every field of the state reaches the view,
under the view's name where the two differ, so a field added to one and not the other fails here."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
import pytest

from actors import messages as m
from actors import state as s
from actors import views as v
from actors.statuses import OrderStatus, RefundStatus, SessionStatus, TokenStatus
from actors.views import view_of

# The state's name -> the view's, where they differ (the view keeps the names readers were first given).
RENAMED = {(s.Refund, "flow"): "source"}
PAIRS = [(s.Order, v.OrderView), (s.Session, v.SessionView), (s.Payment, v.PaymentView),
         (s.Refund, v.RefundView), (s.TxAttempt, v.TransferView), (s.RefundToken, v.TokenView),
         (m.LineItem, v.LineItemView)]
AT = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("state", "view"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_every_field_of_the_state_has_its_place_in_the_view(state, view):
    mapped = {RENAMED.get((state, f), f) for f in state.__struct_fields__}
    assert mapped == set(view.__struct_fields__)


def _full_order() -> s.Order:
    """An order whose every field holds something other than its default."""
    attempt = s.TxAttempt(network="base", tx_hash="0xt", token_address="0xu", submitted_at=AT, status="failed",
                          reason="short")
    return s.Order(
        order_id="ord_1", merchant_id="mer_1", livemode=True, order_number=1001, amount_owed=5_000_000,
        created_at=AT, updated_at=AT, status=OrderStatus.PAID, amount_paid=5_000_000, amount_refunded=1_000_000,
        line_items=(m.LineItem(name="tea", quantity=2, unit_amount=2_500_000),), external_ref="ref-1",
        metadata={"k": "v"}, version=7, receipt_url="https://pay.example/receipts/rcpt_1", payment_link_id="pl_1",
        customer_email="buyer@example.com",
        sessions=(s.Session(session_id="cs_1", session_key="csk_1", amount_due=5_000_000, expires_at=AT,
                            created_at=AT, status=SessionStatus.COMPLETED, success_url="https://a/ok",
                            cancel_url="https://a/no"),),
        payments=(s.Payment(payment_id="pay_1", network="base", tx_hash="0xp", token_address="0xu",
                            amount=5_000_000, received_at=AT, session_id="cs_1", late=True, card_brand="visa",
                            card_last4="4242"),),
        refunds=(s.Refund(refund_id="re_1", link_token="rl_1", amount=1_000_000, reason="broken",
                          refund_to_address="0xr", refund_network="base", refund_token_address="0xu",
                          flow="customer", created_at=AT, updated_at=AT, status=RefundStatus.EXECUTED, note="n",
                          token="rfqt_1", rejection_reason="r", executed_tx_hash="0xe", executed_network="base",
                          executed_token_address="0xu", attempts=(attempt,), retries=2),),
        tokens=(s.RefundToken(token="rfqt_1", ref_type="order", ref_value="ord_1", amount=5_000_000, expires_at=AT,
                              created_at=AT, source="b2b", status=TokenStatus.SUBMITTED, metadata={"a": "b"},
                              hide_summary=True, hide_header=True, refund_id="re_1", customer_note="c",
                              cancel_reason="x", replaced_by="rfqt_2"),),
    )


def _values(obj) -> object:
    """Field name -> value, recursively, under the view's names."""
    if isinstance(obj, msgspec.Struct):
        kind = type(obj)
        return {RENAMED.get((kind, f), f): _values(getattr(obj, f)) for f in kind.__struct_fields__}
    if isinstance(obj, tuple):
        return [_values(item) for item in obj]
    return obj


def test_the_view_holds_every_value_of_the_state():
    order = _full_order()
    for field in s.Order.__struct_fields__:  # the fixture sets every field
        assert getattr(order, field) != getattr(s.Order, field, object()), field
    assert _values(view_of(order)) == _values(order)
