"""The public form of an event: the envelope merchants read and webhooks deliver.

Built in one place so that no payload ever carries `external_ref` (SPEC 6).
"""

from __future__ import annotations

from typing import Any

import msgspec

from actors import messages as m
from actors.order import Order
from service import money
from service.clock import iso

_AMOUNTS = {"amount", "amount_paid", "amount_due", "unit_amount"}
_PRIVATE = {"type", "at", "external_ref", "merchant_id", "livemode", "order_id"}
_FLATTENED = ("session", "destination")


class PublicEvent(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    type: str
    created_at: str
    livemode: bool
    data: dict[str, Any]
    # Routing facts for consumers of the stream; not part of the merchant-facing envelope.
    merchant_id: str
    order_id: str
    seq: int


def _amounts(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: money.format(v) if k in _AMOUNTS and isinstance(v, int) else _amounts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_amounts(v) for v in value]
    return value


def _subject(fields: dict[str, Any], order: Order) -> dict[str, Any]:
    """The refund's or token's current fields, so each of its events tells the whole story."""
    refund = order.refund(fields["refund_id"]) if "refund_id" in fields else None
    if refund is not None:
        return {"refund_status": refund.status.value, "amount": refund.amount, "reason": refund.reason,
                "refund_to_address": refund.refund_to_address, "refund_network": refund.refund_network,
                "refund_token_address": refund.refund_token_address, "link_token": refund.link_token}
    token = order.token(fields.get("token") or fields.get("old_token") or "")
    if token is not None:
        return {"refund_request_status": token.status.value, "amount": token.amount,
                "expires_at": iso(token.expires_at), "ref_type": token.ref_type, "ref_value": token.ref_value}
    return {}


def public_data(event: m.Event, order: Order) -> dict[str, Any]:
    fields = {k: v for k, v in msgspec.to_builtins(event).items() if k not in _PRIVATE}
    for name in _FLATTENED:
        fields.update(fields.pop(name, None) or {})
    # The order's own fields go last: an event's integer order_number must not replace the spec's string.
    return {
        **_amounts({**_subject(fields, order), **fields}),
        "order_id": order.order_id,
        "order_number": str(order.order_number),
        "order_status": order.status.value,
    }


def publish(event_id: str, seq: int, event: m.Event, order: Order) -> PublicEvent:
    return PublicEvent(
        id=event_id,
        type=event.__struct_config__.tag,
        created_at=iso(event.at),
        livemode=order.livemode,
        data=public_data(event, order),
        merchant_id=order.merchant_id,
        order_id=order.order_id,
        seq=seq,
    )
