"""Every date the API and the dashboard read, at the ends of what ISO 8601 and Python can say (year 1, year 9999,
with and without offsets), answers 200 with exactly the rows such a bound selects, or a 4xx naming the field:
never a 500. A filter bound lies before or after every stored time, so it selects everything or nothing."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from yarl import URL

from tests.dashboard.support import Http, make_staff
from tests.integration.test_refunds_api import merchant_refund, paid_order

PAST = ("0001-01-01", "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00-12:00", "1970-01-01T00:00:00Z")
FUTURE = ("9999-12-31", "9999-12-31T23:59:59.999999-12:00", "9999-12-31T23:59:59+14:00", "2999-01-01T00:00:00+05:30")
BOUNDS = [(value, "past") for value in PAST] + [(value, "future") for value in FUTURE]

# (surface, path under /b2b/v1 ({m}: the merchant) or the dashboard, the date parameter): every date parameter of
# every list, export and page. A lower bound (`_gte`, `from`) in the past selects every row, in the future none;
# an upper bound (`_lt`, `to`) the other way round.
ORDER_FILTERS = ("created_gte", "created_lt", "paid_gte", "paid_lt")
READS = (
    [("api", "/orders", name) for name in ORDER_FILTERS]
    + [("api", "/merchants/{m}/audit-events", name) for name in ("created_gte", "created_lt")]
    + [("api", f"/merchants/{{m}}/exports/{kind}", name) for kind in ("orders", "payments", "refunds") for name in ("from", "to")]
    + [("api", "/merchants/{m}/exports/orders", name) for name in ORDER_FILTERS]
    + [("dashboard", "/test/orders", name) for name in ORDER_FILTERS]
    + [("dashboard", f"/test/exports/{kind}", name) for kind in ("orders", "payments", "refunds") for name in ("from", "to")]
    + [("dashboard", "/audit", name) for name in ("from", "to")]
)
LOWER = ("created_gte", "paid_gte", "from")


@pytest.fixture(scope="module")
async def shop(stack):
    """An owner of a merchant with one paid order and a refund of it, so every list, export and the audit log have a
    row naming that order, and a dashboard client signed in as the owner."""
    staff = await make_staff(stack, name="Bounds Bakery")
    order_id = await paid_order(staff.client, "10.00")
    status, refund = await merchant_refund(staff.client, order_id, "1.00")
    assert status == 201
    http = Http(staff.dashboard)
    assert (await http.sign_in(staff))[0] == 303
    # The audit log names the refund; the lists and exports the order.
    yield staff, {"order": order_id, "audit": refund["refund_id"]}, http
    await http.close()


@pytest.mark.parametrize("value, side", BOUNDS)
@pytest.mark.parametrize("surface, path, param", READS)
async def test_a_bound_at_either_end_of_time_selects_all_or_nothing(shop, surface, path, param, value, side):
    staff, names, http = shop
    audit = path.endswith("/audit-events") or path == "/audit"
    # On the audit log, the refund's row alone: every export this test takes is on record too.
    query = urlencode({param: value, **({"action": "refund.issued"} if audit else {})})
    if surface == "api":
        client, target = staff.client, "/b2b/v1" + path.format(m=staff.client.merchant_id) + f"?{query}"
        headers = await client.fresh_headers("GET", target, b"")
        async with client.http.get(URL(client.base_url + target, encoded=True), headers=headers) as response:
            status, text = response.status, await response.text()
    else:
        status, text = await http.get(f"{path}?{query}")
    assert status == 200, (status, text[:500])
    everything = (side == "past") == (param in LOWER)
    assert (names["audit" if audit else "order"] in text) is everything


@pytest.mark.parametrize("value", [*PAST, *FUTURE, "10000-01-01", "not a date"])
async def test_the_counter_app_reads_since_only_within_its_day(shop, stack, value):
    staff, _, http = shop
    status, text = await http.get(f"/test/app/sales?{urlencode({'since': value})}")
    assert status == 422 and "since" in text, (status, text)


@pytest.mark.parametrize("value", [*PAST, *FUTURE])
async def test_a_payment_link_expiry_outside_the_records_is_refused_naming_it(shop, value):
    staff, _, _ = shop
    client = staff.client
    base = f"/b2b/v1/merchants/{client.merchant_id}/payment-links"
    moment = value if "T" in value else f"{value}T00:00:00Z"
    status, body = await client.post(base, {"name": "Bounds", "amount": "1.00", "expires_at": moment})
    assert status == 422 and body["error"]["param"] == "expires_at", body
    status, link = await client.post(base, {"name": "Bounds", "amount": "1.00"})
    assert status == 201
    status, body = await client.patch(f"{base}/{link['payment_link_id']}", {"expires_at": moment})
    assert status == 422 and body["error"]["param"] == "expires_at", body


@pytest.mark.parametrize("value", ["0001-01-01T00:00", "9999-12-31T23:59", "2999-01-01T00:00"])
async def test_the_dashboards_payment_link_form_refuses_an_expiry_outside_the_records(shop, stack, value):
    staff, _, http = shop
    csrf = await stack.pool.fetchval("SELECT s.csrf_token FROM dashboard_sessions s JOIN staff_users u USING (user_id)"
                                     " WHERE u.email = $1 ORDER BY s.created_at DESC LIMIT 1", staff.email)
    status, text, _ = await http.post("/test/payment-links", {"csrf": csrf, "name": "Far", "amount": "1.00",
                                                              "expires_at": value})
    assert status == 422 and "expires_at" in text, (status, text[-2000:])


@pytest.mark.parametrize("value", [*PAST, *FUTURE])
async def test_redelivering_failed_deliveries_since_any_time_answers(shop, value):
    staff, _, _ = shop
    client = staff.client
    base = f"/b2b/v1/merchants/{client.merchant_id}/webhook-endpoints"
    status, endpoint = await client.post(base, {"url": "http://127.0.0.1:9/bounds"})
    assert status == 201
    moment = value if "T" in value else f"{value}T00:00:00Z"
    status, body = await client.post(f"{base}/{endpoint['id']}/redeliver", {"failed_since": moment})
    assert status == 202 and body["delivery_ids"] == [], body
    assert (await client.call("DELETE", f"{base}/{endpoint['id']}"))[0] == 200
