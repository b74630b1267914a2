"""Payment links: the B2B calls, the buyer's page (a view writes nothing; paying makes an order of one's own),
closed links, use limits under concurrent buyers, and each link's orders and money."""

from __future__ import annotations

import asyncio
import re
import secrets
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import msgspec
import pytest

from streams.names import Keys
from tests.conftest import running
from tests.integration.helpers import expire_due, order, pay, until

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def links_path(merchant) -> str:
    return f"/b2b/v1/merchants/{merchant.merchant_id}/payment-links"


async def make(merchant, **body) -> dict:
    status, link = await merchant.post(links_path(merchant), {"name": "Tea subscription", **body})
    assert status == 201, link
    return link


async def buy(stack, link: dict, **form) -> tuple[int, str, str | None]:
    """A buyer choosing to pay on the link's page, as its form posts: (status, body, Location)."""
    async with stack.http.post(f"{stack.base_url}/l/{link['payment_link_id']}", data=form,
                               allow_redirects=False) as resp:
        return resp.status, await resp.text(), resp.headers.get("Location")


async def _uses(stack, link: dict) -> tuple[int, int]:
    """The link's uses now, and every order it ever made."""
    row = await stack.pool.fetchrow(
        "SELECT payment_link_uses($1, $2) AS uses,"
        " (SELECT count(*) FROM payment_link_orders WHERE payment_link_id = $1) AS orders",
        link["payment_link_id"], stack.clock())
    return row["uses"], row["orders"]


async def test_create_read_list_and_archive(stack, merchant):
    link = await make(merchant, amount="12.50", description="Monthly", max_uses=5)
    assert link["object"] == "payment_link" and link["status"] == "active" and link["unavailable_reason"] is None
    assert link["url"] == f"{stack.settings.checkout_base()}/l/{link['payment_link_id']}"
    assert (link["amount"], link["min_amount"], link["max_uses"], link["uses"]) == ("12.50", None, 5, 0)
    assert (link["orders"], link["paid_orders"], link["amount_paid"]) == (0, 0, "0.00")
    status, read = await merchant.get(f"{links_path(merchant)}/{link['payment_link_id']}")
    assert status == 200 and read == link
    other = await make(merchant, min_amount="1.00", max_amount="100.00")
    status, listing = await merchant.get(f"{links_path(merchant)}?limit=1")
    assert status == 200 and [x["payment_link_id"] for x in listing["data"]] == [other["payment_link_id"]]
    status, rest = await merchant.get(f"{links_path(merchant)}?limit=1&cursor={listing['next_cursor']}")
    assert [x["payment_link_id"] for x in rest["data"]] == [link["payment_link_id"]]

    status, archived = await merchant.patch(f"{links_path(merchant)}/{link['payment_link_id']}",
                                            {"status": "archived", "description": None})
    assert status == 200, archived
    assert (archived["status"], archived["unavailable_reason"], archived["description"]) == (
        "archived", "archived", None)
    assert archived["amount"] == "12.50" and archived["max_uses"] == 5  # left out: unchanged
    status, active = await merchant.get(f"{links_path(merchant)}?status=active")
    assert [x["payment_link_id"] for x in active["data"]] == [other["payment_link_id"]]


@pytest.mark.parametrize("body,code,param", [
    ({"amount": "5.00", "min_amount": "1.00"}, "amount_and_bounds", "amount"),
    ({"min_amount": "9.00", "max_amount": "2.00"}, "min_above_max", "min_amount"),
    ({"amount": "-1"}, "invalid_amount", "amount"),
    ({"max_uses": 0}, None, "max_uses"),
    ({"expires_at": "2001-01-01T00:00:00Z"}, "expires_in_the_past", "expires_at"),
    ({"name": ""}, None, "name"),
    ({"price": "1.00"}, None, "price"),
])
async def test_bad_links_are_refused_naming_the_field_and_write_nothing(stack, merchant, body, code, param):
    before = await stack.pool.fetchval("SELECT count(*) FROM payment_links WHERE merchant_id = $1",
                                       merchant.merchant_id)
    status, answer = await merchant.post(links_path(merchant), {"name": "Bad", **body})
    assert status in (400, 422), answer
    assert answer["error"]["param"] == param and (code is None or answer["error"]["code"] == code)
    assert await stack.pool.fetchval("SELECT count(*) FROM payment_links WHERE merchant_id = $1",
                                     merchant.merchant_id) == before


async def test_another_merchants_link_is_not_found_and_its_path_forbidden(stack, merchant):
    link = await make(merchant, amount="1.00")
    other = await stack.merchant("Other")
    status, answer = await other.get(f"{links_path(other)}/{link['payment_link_id']}")
    assert status == 404 and answer["error"]["code"] == "payment_link_not_found"
    status, answer = await other.get(links_path(merchant))
    assert status == 403


async def test_a_page_view_writes_nothing_and_shows_hostile_text_as_text(stack, merchant):
    link = await make(merchant, amount="3.00", name=HOSTILE, description=HOSTILE)
    for _ in range(3):
        async with stack.http.get(f"{stack.base_url}/l/{link['payment_link_id']}") as resp:
            html = await resp.text()
            assert resp.status == 200 and resp.headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert await _uses(stack, link) == (0, 0)
    assert await stack.pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1", merchant.merchant_id) == 0


async def test_each_buyer_gets_an_order_of_their_own_that_carries_the_link(stack, merchant):
    link = await make(merchant, amount="7.00")
    status, _, first = await buy(stack, link, customer_email="ana@example.com")
    assert status == 303 and re.fullmatch(r"/c/cs_test_\w+", first)
    status, _, second = await buy(stack, link)
    assert status == 303 and second != first
    orders = await stack.pool.fetch("SELECT order_id FROM payment_link_orders WHERE payment_link_id = $1"
                                    " ORDER BY created_at", link["payment_link_id"])
    bodies = [await order(merchant, r["order_id"]) for r in orders]
    assert [b["payment_link_id"] for b in bodies] == [link["payment_link_id"]] * 2
    assert [b["amount"] for b in bodies] == ["7.00", "7.00"]
    assert [b["customer_email"] for b in bodies] == ["ana@example.com", None]
    assert [b["line_items"][0]["name"] for b in bodies] == ["Tea subscription"] * 2

    # The second buyer's checkout shows nothing of the first buyer's email.
    async with stack.http.get(stack.base_url + second) as resp:
        assert resp.status == 200 and "ana@example.com" not in await resp.text()
    async with stack.http.get(stack.base_url + second + "/status") as resp:
        assert "ana@example.com" not in await resp.text()

    assert (await pay(merchant, bodies[0]["order_id"], "7.00"))[0] == 201
    status, listing = await merchant.get(f"/b2b/v1/events?order_id={bodies[0]['order_id']}")
    by_type = {e["type"]: e["data"] for e in listing["data"]}
    assert by_type["order.created"]["payment_link_id"] == link["payment_link_id"]
    assert by_type["payment.settled"]["payment_link_id"] == link["payment_link_id"]
    status, read = await merchant.get(f"{links_path(merchant)}/{link['payment_link_id']}")
    assert (read["uses"], read["orders"], read["paid_orders"], read["amount_paid"]) == (2, 2, 1, "7.00")


@pytest.mark.parametrize("form,shown", [
    ({}, "Enter an amount in USD within the range shown."),
    ({"amount": "0.50"}, "Enter an amount in USD within the range shown."),
    ({"amount": "250.00"}, "Enter an amount in USD within the range shown."),
    ({"amount": "abc"}, "Enter an amount in USD within the range shown."),
    ({"amount": "5.00", "customer_email": "not-an-email"}, "Enter a valid email address"),
    ({"amount": "5.00", "customer_email": "<script>@x.io"}, "Enter a valid email address"),
])
async def test_a_buyer_entered_amount_and_email_are_checked_before_anything_is_made(stack, merchant, form, shown):
    link = await make(merchant, min_amount="1.00", max_amount="200.00")
    status, html, location = await buy(stack, link, **form)
    assert status == 422 and location is None and shown in html
    assert "<script>@x.io" not in html
    assert await _uses(stack, link) == (0, 0)


async def test_a_buyer_entered_amount_within_the_range_makes_the_order(stack, merchant):
    link = await make(merchant, min_amount="1.00", max_amount="200.00")
    status, _, location = await buy(stack, link, amount="42.10")
    assert status == 303
    [row] = await stack.pool.fetch("SELECT order_id FROM payment_link_orders WHERE payment_link_id = $1",
                                   link["payment_link_id"])
    assert (await order(merchant, row["order_id"]))["amount"] == "42.10"


async def _rush(stack, link: dict, buyers: int = 20) -> list[str]:
    """`buyers` buyers choosing to pay at once: the orders those who got through made (the others were told 410)."""
    results = await asyncio.gather(*(buy(stack, link) for _ in range(buyers)))
    assert sorted({status for status, _, _ in results}) in ([303], [410], [303, 410]), results
    keys = [location.rsplit("/", 1)[1] for status, _, location in results if status == 303]
    return [await stack.pool.fetchval("SELECT order_id FROM checkout_sessions WHERE session_key = $1", key)
            for key in keys]


async def _paid(stack, merchant, order_id: str) -> None:
    assert (await pay(merchant, order_id, "2.00"))[0] == 201
    assert (await until(merchant, order_id, lambda o: o["status"] == "PAID"))["status"] == "PAID"


async def _link_orders(stack, link: dict) -> dict[str, int]:
    rows = await stack.pool.fetch("SELECT o.status, count(*) FROM payment_link_orders l JOIN orders o USING (order_id)"
                                  " WHERE l.payment_link_id = $1 GROUP BY o.status", link["payment_link_id"])
    return {r["status"]: r["count"] for r in rows}


async def test_uses_are_paid_orders_and_open_sessions_under_concurrent_buyers(stack, merchant, monkeypatch):
    """Unpaid orders hold a use only while their session is open: a canceled order and a session the scheduler
    expired give theirs back, and so does a session whose time ran out before any sweep; at no point do 20 buyers
    at once get past max_uses, and the link ends with exactly max_uses paid orders."""
    # The merchant signs at the stack's time, which this test moves past a session's life.
    monkeypatch.setattr("testkit.signed.time", SimpleNamespace(time=lambda: stack.clock().timestamp()))
    link = await make(merchant, amount="2.00", max_uses=3)
    first = await _rush(stack, link)
    assert len(first) == 3 and await _uses(stack, link) == (3, 3)
    await _paid(stack, merchant, first[0])
    assert (await merchant.patch(f"/b2b/v1/orders/{first[1]}/cancel", {}))[0] == 200
    assert await _uses(stack, link) == (2, 3)
    assert await expire_due(stack, stack.settings.session_ttl_s + 1) >= 1
    await until(merchant, first[2], lambda o: o["status"] == "CANCELED")
    assert await _uses(stack, link) == (1, 3)

    second = await _rush(stack, link)
    assert len(second) == 2 and await _uses(stack, link) == (3, 5)
    await _paid(stack, merchant, second[0])
    stack.clock.advance(stack.settings.session_ttl_s + 1)  # second[1]'s session runs out; no sweep has run yet
    assert await _uses(stack, link) == (2, 5)

    third = await _rush(stack, link)
    assert len(third) == 1
    await _paid(stack, merchant, third[0])
    assert await _rush(stack, link) == []
    assert (await _link_orders(stack, link))["PAID"] == 3
    status, read = await merchant.get(f"{links_path(merchant)}/{link['payment_link_id']}")
    assert (read["uses"], read["orders"], read["paid_orders"], read["unavailable_reason"]) == (3, 6, 3, "used_up")
    async with stack.http.get(f"{stack.base_url}/l/{link['payment_link_id']}") as resp:
        assert resp.status == 410 and 'data-reason="used_up"' in await resp.text()


async def test_expired_and_archived_links_say_so_and_make_nothing(stack, merchant):
    soon = (datetime.now(timezone.utc) + timedelta(seconds=60)).isoformat()
    expiring = await make(merchant, amount="2.00", expires_at=soon)
    archived = await make(merchant, amount="2.00")
    await merchant.patch(f"{links_path(merchant)}/{archived['payment_link_id']}", {"status": "archived"})
    stack.clock.advance(120)
    for link, reason in ((expiring, "expired"), (archived, "archived")):
        async with stack.http.get(f"{stack.base_url}/l/{link['payment_link_id']}") as resp:
            assert resp.status == 410 and f'data-reason="{reason}"' in await resp.text()
        status, _, location = await buy(stack, link)
        assert status == 410 and location is None
        assert await _uses(stack, link) == (0, 0)


async def test_a_script_paying_a_closed_link_is_told_why(stack, merchant):
    link = await make(merchant, amount="2.00", max_uses=1)
    url = f"{stack.base_url}/l/{link['payment_link_id']}"
    async with stack.http.post(url, json={"customer_email": "eve@example.com"}) as resp:
        assert resp.status == 201 and (await resp.json())["checkout_url"].startswith(stack.settings.checkout_base())
    async with stack.http.post(url, json={}) as resp:
        assert resp.status == 410 and (await resp.json())["error"]["code"] == "payment_link_used_up"


async def test_an_unknown_link_is_404(stack):
    async with stack.http.get(f"{stack.base_url}/l/plink_nothing") as resp:
        assert resp.status == 404
    async with stack.http.post(f"{stack.base_url}/l/plink_nothing", data={}) as resp:
        assert resp.status == 404


async def test_a_post_from_another_origin_is_refused(stack, merchant):
    link = await make(merchant, amount="2.00")
    async with stack.http.post(f"{stack.base_url}/l/{link['payment_link_id']}", data={},
                               headers={"Origin": "https://evil.example"}, allow_redirects=False) as resp:
        assert resp.status == 403
    assert await _uses(stack, link) == (0, 0)


async def test_orders_through_links_are_limited_per_client_address(stack, settings, pool, redis, merchant):
    """On a stack of its own (its buckets start full), with small page limits."""
    small = msgspec.structs.replace(settings, redis_prefix=f"{settings.redis_prefix}pl{secrets.token_hex(3)}:",
                                    page_rate_limit_rps=1, page_rate_limit_burst=30)
    link = await make(merchant, amount="2.00")
    async with running(small, pool, redis, Keys(small.redis_prefix, small.partitions)) as limited:
        statuses = [(await buy(limited, link))[0] for _ in range(4)]
    assert statuses == [303] * 3 + [429]  # a tenth of the pages' burst of 30
    assert await _uses(stack, link) == (3, 3)


async def test_a_paid_link_order_has_its_receipt(stack, merchant):
    link = await make(merchant, amount="4.00")
    await buy(stack, link)
    [row] = await stack.pool.fetch("SELECT order_id FROM payment_link_orders WHERE payment_link_id = $1",
                                   link["payment_link_id"])
    status, paid = await pay(merchant, row["order_id"], "4.00")
    assert status == 201 and paid["receipt_url"]
    body = await until(merchant, row["order_id"], lambda o: o["status"] == "PAID")
    assert body["receipt_url"] == paid["receipt_url"]
