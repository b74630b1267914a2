"""Request bodies of the B2B API as msgspec structs; unknown fields are refused."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from common import order_limits

# An object's id, as the service makes them (a prefix, `_`, letters and digits): never `/`, `..` or a control character.
Id = Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")]
Url = Annotated[str, Meta(max_length=2048, pattern=r"^https?://[^\s]+$")]
# A checkout session lives 1 s to 7 days: short ones let an integration watch expiry happen in its tests.
Ttl = Annotated[int, Meta(ge=order_limits.SESSION_TTL_MIN_S, le=order_limits.SESSION_TTL_MAX_S)]
Text = Annotated[str, Meta(max_length=order_limits.MAX_TEXT)]
Name = Annotated[str, Meta(max_length=order_limits.MAX_NAME)]
Email = Annotated[str, Meta(max_length=order_limits.MAX_EMAIL, pattern=f"^{order_limits.EMAIL.pattern}$",
                            description="An email address, where the buyer's receipt is mailed")]
Metadata = Annotated[dict[Annotated[str, Meta(min_length=1, max_length=order_limits.METADATA_KEY)],
                          Annotated[str, Meta(max_length=order_limits.METADATA_VALUE)]],
                     Meta(max_length=order_limits.METADATA_KEYS)]


class _Body(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class LineItemIn(_Body):
    """One item; its unit price is `unit_amount`, or by the names other checkouts use, `unit_price` or `price`."""

    name: Annotated[str, Meta(min_length=1, max_length=order_limits.MAX_NAME)]
    unit_amount: str | None = None
    unit_price: str | None = None
    price: str | None = None
    quantity: Annotated[int, Meta(ge=1, le=order_limits.MAX_QUANTITY)] = 1


# A hard ceiling; MAX_LINE_ITEMS (default 100) is the limit an order actually gets (web/api/handlers/orders.py).
LineItems = Annotated[list[LineItemIn], Meta(min_length=1, max_length=order_limits.MAX_LINE_ITEMS)]


class OrderIn(_Body):
    amount: str | None = None
    line_items: LineItems | None = None
    items: LineItems | None = None  # another name of line_items
    external_ref: Name | None = None
    metadata: Metadata | None = None
    customer_email: Email | None = None  # the buyer's, for the receipt; shown to the merchant, never to buyers


class SessionOptions(_Body):
    success_url: Url | None = None
    cancel_url: Url | None = None
    ttl_seconds: Ttl | None = None


class QuickSessionIn(OrderIn):
    success_url: Url | None = None
    cancel_url: Url | None = None
    ttl_seconds: Ttl | None = None


class SaleIn(_Body):
    """A sale at the merchant app's counter: an amount and an optional note, kept as the order's external_ref."""
    amount: str
    external_ref: Name | None = None


class PinIn(_Body):
    """The merchant app's quick-lock PIN, set with the account's password."""
    password: Annotated[str, Meta(max_length=1024)]
    pin: Annotated[str, Meta(max_length=16)]


class UnlockIn(_Body):
    pin: Annotated[str, Meta(max_length=16)]


class SessionIn(SessionOptions, kw_only=True):
    order_id: Id
    amount_due: str | None = None


class ReopenIn(SessionOptions):
    pass


class CancelIn(_Body):
    pass


class OrderCancelIn(_Body):
    reason: Text | None = None  # free text, kept as metadata.cancel_note; canceled_reason stays merchant_canceled


class TestPaymentIn(_Body):
    amount: str
    network: Annotated[str, Meta(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")]
    token_address: Annotated[str, Meta(min_length=1, max_length=128)]
    tx_hash: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class RefundIn(_Body):
    order_id: Id
    amount: str
    # Required on chain; ignored on the card rail (`refund_network: "card"`), where the provider routes the money.
    refund_to_address: Annotated[str, Meta(max_length=128)] | None = None
    # Left out, network and token are those the order was paid with (docs/spec.md §2.3: usually the original token).
    refund_network: Annotated[str, Meta(max_length=40)] | None = None
    refund_token_address: Annotated[str, Meta(max_length=128)] | None = None
    reason: Text = ""


class CustomerRefundIn(RefundIn, kw_only=True):
    note: Text | None = None


class RejectIn(_Body):
    reason: Text | None = None


class RefundRequestIn(_Body):
    """ref_type + ref_value + amount; or the legacy body with `order_id` alone."""

    ref_type: Annotated[str, Meta(pattern="^(order_id|order_number|session_id|session_key)$")] | None = None
    ref_value: Annotated[str, Meta(min_length=1, max_length=order_limits.MAX_NAME)] | None = None
    amount: str | None = None
    order_id: Id | None = None
    ttl_seconds: int | None = None
    metadata: Metadata | None = None
    hide_summary: bool = False
    hide_header: bool = False


class TokenCancelIn(_Body):
    reason: Text | None = None


class RenewalApproveIn(_Body):
    ttl_seconds: int | None = None


class CardIn(_Body):
    """The merchant's own provider account; its two secrets are sealed and never answered back."""

    provider: Literal["stripe"]
    secret_key: Annotated[str, Meta(min_length=8, max_length=255)]
    publishable_key: Annotated[str, Meta(min_length=8, max_length=255)]
    webhook_secret: Annotated[str, Meta(min_length=8, max_length=255)]


class SettingsIn(_Body):
    auto_approve_customer_refunds: bool | None = None
    # Absent: unchanged; null: the caller's mode's account is disconnected.
    card: CardIn | None | msgspec.UnsetType = msgspec.UNSET
    # network slug -> address; null removes the network
    receive_addresses: dict[Annotated[str, Meta(max_length=40)], Annotated[str, Meta(max_length=128)] | None] | None = None


class TestRefundExecutionIn(_Body):
    tx_hash: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class SubmitTxIn(_Body):
    tx_hash: Annotated[str, Meta(min_length=1, max_length=128)]
    network: Annotated[str, Meta(min_length=1, max_length=40)]
    token_address: Annotated[str, Meta(min_length=1, max_length=128)]


class InvitationIn(_Body):
    """The role is checked by the handler, so a wrong one is refused in words naming `role`."""
    email: Annotated[str, Meta(max_length=320)]
    role: Annotated[str, Meta(max_length=40)]


class StaffRoleIn(_Body):
    role: Annotated[str, Meta(max_length=40)]
