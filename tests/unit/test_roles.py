"""The role table: what each role may do, nothing for a role the table does not know, and no route without a
permission."""

from __future__ import annotations

import pytest

from accounts.roles import GRANTS, Can, allows
from web.dashboard.guard import signed_in

TABLE = {
    Can.SIGN_OUT: ("owner", "manager", "cashier"),
    Can.SELL: ("owner", "manager", "cashier"),
    Can.SEE_ORDERS: ("owner", "manager"),
    Can.REFUND: ("owner", "manager"),
    Can.CONFIGURE: ("owner",),
    Can.MANAGE_TEAM: ("owner",),
    Can.SHARE_LINKS: ("owner", "manager"),
}


@pytest.mark.parametrize("role", [*GRANTS, "admin", "Owner", ""])
@pytest.mark.parametrize("can", list(Can))
def test_each_role_may_do_what_the_table_says(role, can):
    assert allows(role, can) == (role in TABLE[can])


def test_a_handler_cannot_be_guarded_without_a_permission():
    async def handler(request):
        return None

    with pytest.raises(TypeError, match="needs a permission"):
        signed_in(handler)
