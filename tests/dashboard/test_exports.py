"""The dashboard's date filters and Export buttons: the files are the API's, for the filters on screen; a cashier
is refused."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta

from tests.dashboard.support import sign_in
from tests.dashboard.test_orders_list import listed
from tests.integration.helpers import pay, quick
from tests.integration.test_refunds_api import merchant_refund


def day(text: str, days: int = 0) -> str:
    return (datetime.fromisoformat(text) + timedelta(days=days)).date().isoformat()


async def test_orders_filtered_by_creation_and_paid_time_and_exported_as_shown(stack, http, staff):
    pending = await quick(staff.client, amount="1.00")
    paid = await quick(staff.client, amount="2.00")
    assert (await pay(staff.client, paid["order_id"], "2.00"))[0] == 201
    created = (await staff.client.get(f"/b2b/v1/orders/{paid['order_id']}"))[1]["created_at"]
    today, tomorrow = day(created), day(created, 1)
    await http.sign_in(staff)

    assert set((await listed(http, f"?created_gte={today}&created_lt={tomorrow}"))[0]) == \
        {pending["order_id"], paid["order_id"]}
    assert (await listed(http, f"?created_lt={today}"))[0] == []
    assert (await listed(http, f"?paid_gte={today}"))[0] == [paid["order_id"]]
    assert (await listed(http, f"?paid_gte={today}&status=PENDING"))[0] == []

    status, page = await http.get(f"/test/orders?paid_gte={today}&status=PAID")
    assert 'value="' + today + '" data-testid="paid-gte"' in page
    link = re.search(r'href="/dashboard(/test/exports/orders\?[^"]*)"', page).group(1).replace("&amp;", "&")
    assert "paid_gte=" + today in link and "status=PAID" in link
    async with http.session.get(http.dashboard + link, allow_redirects=False) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/csv")
        assert resp.headers["Content-Disposition"].startswith('attachment; filename="orders-test-')
        rows = list(csv.DictReader(io.StringIO(await resp.text())))
    assert [(r["order_id"], r["amount_paid"], r["currency"]) for r in rows] == [(paid["order_id"], "2.00", "USD")]


async def test_a_bad_date_is_named(http, staff):
    await http.sign_in(staff)
    status, text = await http.get("/test/orders?created_gte=someday")
    assert status == 422 and "created_gte" in text
    status, text = await http.get("/test/exports/orders?created_gte=someday")
    assert status == 422 and '"param":"created_gte"' in text.replace(" ", "")


async def test_a_cashier_gets_no_file(stack, staff, signed_in_as):
    order_id = (await quick(staff.client, amount="3.00"))["order_id"]
    assert (await pay(staff.client, order_id, "3.00"))[0] == 201
    assert (await merchant_refund(staff.client, order_id, "1.00"))[0] == 201
    cashier = await signed_in_as(staff, "cashier")
    for kind in ("orders", "payments", "refunds"):
        status, text = await cashier.get(f"/test/exports/{kind}")
        assert status == 403 and '"code":"role_forbidden"' in text.replace(" ", "") and order_id not in text
    manager = await signed_in_as(staff, "manager")
    status, text = await manager.get("/test/exports/refunds")
    assert status == 200 and order_id in text


async def test_the_export_buttons_download_in_a_browser(stack, page, staff):
    order_id = (await quick(staff.client, amount="4.00"))["order_id"]
    await sign_in(page, staff)
    await page.goto(staff.url("/orders"))
    async with page.expect_download() as download:
        await page.get_by_test_id("export-orders").click()
    got = await download.value
    assert got.suggested_filename.startswith("orders-test-") and got.suggested_filename.endswith(".csv")
    assert order_id in open(await got.path()).read()
    await page.goto(staff.url("/review"))
    async with page.expect_download() as download:
        await page.get_by_test_id("export-refunds").click()
    assert (await download.value).suggested_filename.startswith("refunds-test-")
