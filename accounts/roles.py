"""Who may do what: each signed-in route names the permission it needs, and a user's role grants a set of them."""

from __future__ import annotations

from enum import Enum


class Can(Enum):
    SIGN_OUT = "sign_out"  # and read who is signed in: every role
    SELL = "sell"  # the point of sale, and one's own sales
    SEE_ORDERS = "see_orders"  # every order of the merchant
    REFUND = "refund"  # issue refunds and links, execute them, review (approve, reject, cancel, renew)
    CONFIGURE = "configure"  # settings, API keys, card account, webhook redelivery
    MANAGE_TEAM = "manage_team"  # the team page (invite, change roles, remove) and the audit log
    SHARE_LINKS = "share_links"  # payment links: create, share, archive, and see their orders and money


GRANTS: dict[str, frozenset[Can]] = {
    "owner": frozenset(Can),
    # A manager runs the floor: sells, finds any order and refunds it, but changes no keys or payout addresses.
    "manager": frozenset({Can.SIGN_OUT, Can.SELL, Can.SEE_ORDERS, Can.REFUND, Can.SHARE_LINKS}),
    # A cashier at a shared till: a stolen or unlocked session can neither move money out nor read other sales.
    "cashier": frozenset({Can.SIGN_OUT, Can.SELL}),
}


def allows(role: str, needed: Can) -> bool:
    """Unknown roles get nothing: a row edited by hand to a typo opens no door."""
    return needed in GRANTS.get(role, frozenset())
