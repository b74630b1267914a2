"""The point of sale over HTTP: a sale is the API's quick session, its status is the checkout page's, a cashier
sees their own sales only, and bad input names its field and writes nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

import pytest

from tests.dashboard.support import Http, make_staff
from tests.integration.helpers import order, pay

NETWORKS = ["Ethereum Sepolia", "Base Sepolia", "Solana Devnet", "TRON Nile", "TON Testnet"]  # test mode's


async def post_json(http: Http, path: str, body: dict, csrf: str) -> tuple[int, dict]:
    async with http.session.post(http.dashboard + path, json=body, headers={"X-CSRF-Token": csrf}) as response:
        return response.status, await response.json()


async def get_json(http: Http, path: str) -> tuple[int, dict]:
    async with http.session.get(http.dashboard + path) as response:
        return response.status, await response.json()


async def signed_in(stack, staff, role: str) -> tuple[Http, str]:
    user = staff if role == "owner" else await make_staff(stack, staff.client, role=role)
    http = Http(staff.dashboard)
    status, _, location = await http.sign_in(user)
    assert status == 303
    return http, (await get_json(http, "/app/me"))[1]["csrf"]


def midnight() -> str:
    return (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()


async def test_a_sale_is_a_quick_session_with_its_qr_networks_and_live_status(stack, shop_staff):
    http, csrf = await signed_in(stack, shop_staff, "cashier")
    try:
        status, sale = await post_json(http, "/test/app/sales", {"amount": "12.50", "external_ref": "table 4"}, csrf)
        assert status == 201, sale
        assert (sale["amount"], sale["external_ref"], sale["status"]["state"]) == ("12.50", "table 4", "waiting")
        assert urlsplit(sale["checkout_url"]).path.startswith("/c/cs_test_")
        assert sale["qr"].startswith("data:image/svg+xml")
        assert sale["networks"] == NETWORKS
        made = await order(shop_staff.client, sale["order_id"])  # the API sees the order the counter made
        assert (made["amount"], made["external_ref"], made["status"]) == ("12.50", "table 4", "PENDING")

        assert (await pay(shop_staff.client, sale["order_id"], "5.00"))[0] == 201
        status, now = await get_json(http, f"/test/app/sales/{sale['order_id']}")
        assert (status, now["status"]["state"], now["status"]["amount_due"]) == (200, "partially_paid", "7.50")
        assert (await pay(shop_staff.client, sale["order_id"], "7.50"))[0] == 201
        assert (await get_json(http, f"/test/app/sales/{sale['order_id']}"))[1]["status"]["state"] == "paid"

        status, day = await get_json(http, f"/test/app/sales?since={midnight().replace('+', '%2B')}")
        assert status == 200
        assert (day["count"], day["paid"], day["paid_count"]) == (1, "12.50", 1)
        assert [(s["order_id"], s["status"]) for s in day["sales"]] == [(sale["order_id"], "PAID")]
    finally:
        await http.close()


async def test_a_cashier_sees_only_their_own_sales(stack, shop_staff):
    first, first_csrf = await signed_in(stack, shop_staff, "cashier")
    owner, owner_csrf = await signed_in(stack, shop_staff, "owner")
    try:
        _, mine = await post_json(first, "/test/app/sales", {"amount": "3.00"}, first_csrf)
        _, owners = await post_json(owner, "/test/app/sales", {"amount": "4.00"}, owner_csrf)
        status, body = await get_json(first, f"/test/app/sales/{owners['order_id']}")
        assert (status, body["error"]["code"]) == (404, "order_not_found")
        assert (await get_json(owner, f"/test/app/sales/{mine['order_id']}"))[0] == 200  # an owner sees every sale
        since = midnight().replace("+", "%2B")
        assert [s["amount"] for s in (await get_json(first, f"/test/app/sales?since={since}"))[1]["sales"]] == ["3.00"]
        assert [s["amount"] for s in (await get_json(owner, f"/test/app/sales?since={since}"))[1]["sales"]] == ["4.00"]
    finally:
        await first.close()
        await owner.close()


@pytest.mark.parametrize(("body", "param"), [
    ({"amount": "12.50 USD"}, "amount"),
    ({"amount": "-1"}, "amount"),
    ({"amount": "0"}, "amount"),
    ({}, "amount"),
    ({"amount": "1.00", "external_ref": "x" * 5000}, "external_ref"),
    ({"amount": "1.00", "metadata": {"sold_by": "someone else"}}, "metadata"),
])
async def test_a_bad_sale_names_its_field_and_writes_nothing(stack, shop_staff, body, param):
    http, csrf = await signed_in(stack, shop_staff, "cashier")
    try:
        status, answer = await post_json(http, "/test/app/sales", body, csrf)
        assert status in (400, 422) and answer["error"]["param"] == param, answer
        assert await stack.pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1",
                                         shop_staff.merchant_id) == 0
    finally:
        await http.close()


@pytest.mark.parametrize("since", ["", "yesterday", "2020-01-01T00:00:00%2B00:00", "2026-01-01T00:00:00"])
async def test_todays_sales_need_a_recent_since(stack, shop_staff, since):
    http, _ = await signed_in(stack, shop_staff, "cashier")
    try:
        status, answer = await get_json(http, f"/test/app/sales?since={since}")
        assert (status, answer["error"]["param"]) == (422, "since")
    finally:
        await http.close()


async def test_a_sale_needs_the_sessions_csrf_token(stack, shop_staff):
    http, _ = await signed_in(stack, shop_staff, "cashier")
    try:
        status, answer = await post_json(http, "/test/app/sales", {"amount": "1.00"}, "forged")
        assert (status, answer["error"]["code"]) == (403, "csrf_token_invalid")
        assert await stack.pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1",
                                         shop_staff.merchant_id) == 0
    finally:
        await http.close()


async def test_a_sale_sent_again_with_its_idempotency_key_is_the_same_sale(stack, shop_staff):
    """The app keeps a sale's key until it is answered: a tap again after a lost answer finds the first order."""
    http, csrf = await signed_in(stack, shop_staff, "cashier")
    try:
        answers = []
        for _ in range(2):
            async with http.session.post(http.dashboard + "/test/app/sales", json={"amount": "7.25", "external_ref": "tap again"},
                                         headers={"X-CSRF-Token": csrf, "Idempotency-Key": "sale-7-25-a"}) as response:
                answers.append((response.status, await response.json()))
        [(first_status, first), (again_status, again)] = answers
        assert (first_status, again_status) == (201, 201)
        assert again["order_id"] == first["order_id"]
        assert again["checkout_url"] == first["checkout_url"]
        sold = await stack.pool.fetchval("SELECT count(*) FROM counter_sales WHERE order_id = $1", first["order_id"])
        made = await stack.pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1 AND external_ref = $2",
                                         shop_staff.client.merchant_id, "tap again")
        assert (sold, made) == (1, 1)
    finally:
        await http.close()
