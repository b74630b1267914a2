"""Request bodies of the payment-link calls; unknown fields are refused."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from common import order_limits
from web.api.bodies import Email, _Body

LinkName = Annotated[str, Meta(min_length=1, max_length=order_limits.MAX_NAME)]
LinkText = Annotated[str, Meta(max_length=order_limits.MAX_TEXT)]
Uses = Annotated[int, Meta(ge=1, le=1_000_000_000)]
When = Annotated[datetime, Meta(tz=True)]


class PaymentLinkIn(_Body):
    """`amount` fixes the price; without it the buyer enters one, within `min_amount` and `max_amount` if given."""

    name: LinkName
    description: LinkText | None = None
    amount: str | None = None
    min_amount: str | None = None
    max_amount: str | None = None
    max_uses: Uses | None = None
    expires_at: When | None = None


class PaymentLinkPatchIn(_Body):
    """Fields left out stay as they are; `null` clears description, max_uses or expires_at. The price is fixed."""

    name: LinkName | UnsetType = UNSET
    description: LinkText | None | UnsetType = UNSET
    max_uses: Uses | None | UnsetType = UNSET
    expires_at: When | None | UnsetType = UNSET
    status: Literal["active", "archived"] | UnsetType = UNSET


class PayIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The buyer's choice to pay on the link's page: the amount where the buyer enters it, and where to mail
    the receipt."""

    amount: Annotated[str, Meta(max_length=40)] | None = None
    customer_email: Email | None = None
    csrf: str = ""
