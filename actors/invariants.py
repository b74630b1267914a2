"""What any command must hold before the order core decides it, whoever wrote it to the stream.

The web layer validates request bodies against the same bounds (common/order_limits.py); this holds every other path
into the record to them: a producer of an older release, a replay tool, a hand-made stream entry, a bug. A breach
is a refusal (422 `invariant_violated`, `param` naming the field), never an exception.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from actors import messages as m
from actors.errors import Refused
from common import order_limits

CODE = "invariant_violated"
FLOWS = ("merchant", "customer")
REF_TYPES = ("order_id", "order_number", "session_id", "session_key")
TOKEN_SOURCES = ("b2b", "dashboard", "renewal")
CARD_REFUND_STATUSES = ("pending", "succeeded", "failed", "canceled")


def _broken(param: str, rule: str) -> Refused:
    return Refused(422, CODE, f"`{param}` {rule}.", param)


def _id(param: str, value: object) -> None:
    if not isinstance(value, str) or not order_limits.ID_SHAPES[param].fullmatch(value):
        raise _broken(param, f"must be an id of the form {order_limits.ID_PREFIXES[param]}_...")


def _time(param: str, value: object) -> None:
    if not isinstance(value, datetime) or not order_limits.is_utc(value):
        raise _broken(param, f"must be a UTC time between {order_limits.EARLIEST.year} and {order_limits.LATEST.year}")


def _amount(param: str, value: object) -> None:
    if type(value) is not int or not 0 < value <= order_limits.MAX_AMOUNT:
        raise _broken(param, "must be a positive whole number of micro-USD within the largest amount accepted")


def _text(param: str, value: object, most: int, least: int = 0) -> None:
    if not isinstance(value, str) or not least <= len(value) <= most:
        raise _broken(param, f"must be text of {least} to {most} characters")


def _one_of(param: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise _broken(param, f"must be one of {', '.join(allowed)}")


def _session(cmd: m.Command, session: m.NewSession) -> None:
    _id("session_id", session.session_id)
    if not order_limits.SESSION_KEY_SHAPES[cmd.livemode].fullmatch(session.session_key):
        raise _broken("session.session_key", f"must be a session key of {'live' if cmd.livemode else 'test'} mode")
    _time("session.expires_at", session.expires_at)
    lives = session.expires_at - cmd.at
    shortest, longest = order_limits.SESSION_TTL_MIN_S, order_limits.SESSION_TTL_MAX_S
    if not timedelta(seconds=shortest) <= lives <= timedelta(seconds=longest):
        raise _broken("session.expires_at", f"must lie {shortest} s to {longest} s after the command's time")


def _metadata(metadata: dict) -> None:
    if len(metadata) > order_limits.METADATA_KEYS:
        raise _broken("metadata", f"may hold at most {order_limits.METADATA_KEYS} keys")
    for key, value in metadata.items():
        _text("metadata", key, order_limits.METADATA_KEY, 1)
        _text(f"metadata.{key}", value, order_limits.METADATA_VALUE)


def _create(cmd: m.CreateOrder) -> None:
    _amount("amount", cmd.amount)
    if cmd.order_number < 0:
        raise _broken("order_number", "must not be negative")
    if len(cmd.line_items) > order_limits.MAX_LINE_ITEMS:
        raise _broken("line_items", f"may hold at most {order_limits.MAX_LINE_ITEMS} items")
    for n, item in enumerate(cmd.line_items):
        _text(f"line_items[{n}].name", item.name, order_limits.MAX_NAME, 1)
        _amount(f"line_items[{n}].unit_amount", item.unit_amount)
        if type(item.quantity) is not int or not 0 < item.quantity <= order_limits.MAX_QUANTITY:
            raise _broken(f"line_items[{n}].quantity", f"must be a whole number from 1 to {order_limits.MAX_QUANTITY}")
    if cmd.line_items and cmd.amount != sum(i.unit_amount * i.quantity for i in cmd.line_items):
        raise _broken("amount", "must equal the sum of the line items")
    if cmd.external_ref is not None:
        _text("external_ref", cmd.external_ref, order_limits.MAX_NAME)
    if cmd.receipt_url is not None:
        _text("receipt_url", cmd.receipt_url, order_limits.MAX_URL, 1)
    if cmd.payment_link_id is not None:
        _id("payment_link_id", cmd.payment_link_id)
    if cmd.customer_email is not None and not (len(cmd.customer_email) <= order_limits.MAX_EMAIL
                                               and order_limits.EMAIL.fullmatch(cmd.customer_email)):
        raise _broken("customer_email", "must be an email address")
    _metadata(cmd.metadata)
    if cmd.session is not None:
        _session(cmd, cmd.session)


def _refund(cmd: m.CreateRefund) -> None:
    _id("refund_id", cmd.refund_id)
    _id("link_token", cmd.link_token)
    _amount("amount", cmd.amount)
    _one_of("flow", cmd.flow, FLOWS)
    _text("reason", cmd.reason, order_limits.MAX_TEXT)
    if cmd.token is not None:
        _id("token", cmd.token)


def _mint(cmd: m.MintRefundToken) -> None:
    _id("token", cmd.token)
    _one_of("ref_type", cmd.ref_type, REF_TYPES)
    _text("ref_value", cmd.ref_value, order_limits.MAX_NAME, 1)
    if cmd.amount is not None:
        _amount("amount", cmd.amount)
    _time("expires_at", cmd.expires_at)  # no TTL bounds: docs/spec.md §8 enforces none on refund-request tokens
    _one_of("source", cmd.source, TOKEN_SOURCES)
    _metadata(cmd.metadata)


def check(cmd: m.Command) -> None:
    """Refuse the command if it breaks a bound; return nothing if it keeps them all."""
    _id("order_id", cmd.order_id)
    _id("merchant_id", cmd.merchant_id)
    _time("at", cmd.at)
    match cmd:
        case m.CreateOrder():
            _create(cmd)
        case m.OpenSession():
            _session(cmd, cmd.session)
            if cmd.amount_due is not None:
                _amount("amount_due", cmd.amount_due)
        case m.ReopenOrder():
            _session(cmd, cmd.session)
        case m.ExpireSession():
            _id("session_id", cmd.session_id)
        case m.ConfirmPayment():
            _id("payment_id", cmd.payment_id)
            _amount("amount", cmd.amount)
            if cmd.session_id is not None:
                _id("session_id", cmd.session_id)
            _text("card_brand", cmd.card_brand, 20)
            _text("card_last4", cmd.card_last4, 4)
        case m.CreateRefund():
            _refund(cmd)
        case m.ApproveRefund() | m.RejectRefund() | m.CancelRefund() | m.SubmitRefundTx() | m.FailRefundTx() \
                | m.ConfirmRefundTransfer() | m.RetryRefund():
            _id("refund_id", cmd.refund_id)
        case m.RecordCardRefund():
            _id("refund_id", cmd.refund_id)
            _one_of("status", cmd.status, CARD_REFUND_STATUSES)
            _text("provider_refund_id", cmd.provider_refund_id, order_limits.MAX_NAME)
        case m.MintRefundToken():
            _mint(cmd)
        case m.CancelRefundToken() | m.ExpireRefundToken() | m.RequestTokenRenewal():
            _id("token", cmd.token)
        case m.ApproveTokenRenewal():
            _id("token", cmd.token)
            _id("new_token", cmd.new_token)
            _time("expires_at", cmd.expires_at)
