"""The order's read view, and its one derivation from the state: what every reader and every reply sees.

Readers (web, dashboard, pages, watchers, the card refund sender, the receipt mailer) see these structs, mapped from
`orders.state` by `stored_view` or decoded from an actor's reply, never the state's JSON: its stored shape is
versioned (actors/schema.py) and can change without them. The view is the state's own shapes but for one name, a
refund's origin, which the state calls `flow` and the view `source`, as readers and replies were first given it;
so a field of the order is written once, in actors/state.py. The state alone is stored: a command writes the
order's JSON once.
"""

from __future__ import annotations

import msgspec

from actors import messages as m
from actors import schema
from actors.state import Order, Payment, Refund, RefundToken, Session, TxAttempt

# The shapes the state and its view share, under the names readers know them by.
LineItemView, SessionView, PaymentView, TransferView, TokenView = m.LineItem, Session, Payment, TxAttempt, RefundToken

_VIEW_NAMES = {"flow": "source"}  # a state field's name -> the view's, where they differ


def _renamed(state: type[msgspec.Struct], name: str) -> type[msgspec.Struct]:
    """The state's struct as the view's: every field in its place, with its type and default, under the view's
    name where that differs; the same bases, so the same rules (actors/rules.py)."""
    fields = [(_VIEW_NAMES.get(f.name, f.name), f.type,
               msgspec.field(default=f.default, default_factory=f.default_factory))
              for f in msgspec.structs.fields(state)]
    return msgspec.defstruct(name, fields, bases=state.__bases__, module=__name__, frozen=True, gc=False,
                             kw_only=True)


RefundView = _renamed(Refund, "RefundView")


class OrderView(Order, frozen=True, gc=False, kw_only=True):
    """The order's state with its refunds as the view names them."""

    refunds: tuple[RefundView, ...] = ()


decode = msgspec.json.Decoder(OrderView).decode


def _refund(r: Refund) -> RefundView:
    return RefundView(**{_VIEW_NAMES.get(name, name): value for name, value in msgspec.structs.asdict(r).items()})


def view_of(o: Order) -> OrderView:
    return OrderView(**{**msgspec.structs.asdict(o), "refunds": tuple(_refund(r) for r in o.refunds)})


def stored_view(state: str | bytes, state_schema: int) -> OrderView:
    """The view of an order as stored (`orders.state` and `orders.state_schema`)."""
    return view_of(schema.snapshot(state, state_schema))
