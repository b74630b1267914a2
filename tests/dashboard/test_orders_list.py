"""The orders list: status filter, search by order number or external reference, cursor pages."""

from __future__ import annotations

import re

from tests.integration.helpers import pay, quick

ROW = re.compile(r'data-order-id="(ord_[0-9a-f]+)"')


async def listed(http, query: str = "") -> tuple[list[str], str | None]:
    status, text = await http.get(f"/test/orders{query}")
    assert status == 200, text[:300]
    older = re.search(r'href="/dashboard/test/orders\?([^"]+)" data-testid="next-page"', text)
    return ROW.findall(text), (older.group(1).replace("&amp;", "&") if older else None)


async def test_status_filter_and_search_by_number_or_external_ref(http, staff):
    paid = await quick(staff.client, amount="5.00", external_ref="SHOP-77")
    assert (await pay(staff.client, paid["order_id"], "5.00"))[0] == 201
    pending = await quick(staff.client, amount="6.00", external_ref="1234")
    await http.sign_in(staff)

    assert (await listed(http))[0] == [pending["order_id"], paid["order_id"]]  # newest first
    assert (await listed(http, "?status=PAID"))[0] == [paid["order_id"]]
    assert (await listed(http, "?status=PENDING&q="))[0] == [pending["order_id"]]
    assert (await listed(http, "?q=SHOP-77"))[0] == [paid["order_id"]]
    assert (await listed(http, f"?q={paid['order_number']}"))[0] == [paid["order_id"]]
    assert (await listed(http, "?q=1234"))[0] == [pending["order_id"]]  # digits: a number or an external_ref
    assert (await listed(http, "?q=SHOP-77&status=PENDING"))[0] == []
    assert (await listed(http, "?q=nothing-like-it"))[0] == []


async def test_cursor_pages_walk_every_order_once(http, staff):
    made = [(await quick(staff.client, amount="1.00"))["order_id"] for _ in range(23)]
    await http.sign_in(staff)
    first, older = await listed(http)
    assert len(first) == 20 and older is not None
    second, last = await listed(http, "?" + older)
    assert last is None
    assert first + second == list(reversed(made))


async def test_a_bad_filter_is_a_page_not_a_crash(http, staff):
    await http.sign_in(staff)
    for query in ("?status=LOST", "?cursor=not-a-cursor"):
        status, text = await http.get(f"/test/orders{query}")
        assert status == 422 and 'data-testid="dashboard-error"' in text
