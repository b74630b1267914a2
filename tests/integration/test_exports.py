"""Accounting exports through the signed API: ranges and filters, both formats, spreadsheet safety, and totals that
agree with the API's own lists."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from testkit.signed import Signed
from tests.integration.helpers import pay, quick
from tests.integration.test_refund_requests_api import Buyer, minted
from tests.integration.test_refunds_api import DEST, merchant_refund, paid_order

HOUR = 3600


class OnStackClock(Signed):
    """The merchant's client signing on the stack's clock, which these tests move by hours."""

    def __init__(self, client: Signed, clock) -> None:
        super().__init__(client.http, client.base_url, client.public_key, client.secret_key, client.merchant_id)
        self.clock = clock

    async def _fresh_timestamp(self, method: str, path: str, body: bytes) -> int:
        return await super()._fresh_timestamp(method, path, body) + int(self.clock.offset.total_seconds())


@pytest.fixture
async def merchant(stack) -> Signed:
    return OnStackClock(await stack.merchant(), stack.clock)


async def download(client, kind: str, query: str = "") -> tuple[int, dict, bytes]:
    path = f"/b2b/v1/merchants/{client.merchant_id}/exports/{kind}" + (f"?{query}" if query else "")
    headers = await client.fresh_headers("GET", path, b"")
    async with client.http.get(client.base_url + path, headers=headers) as resp:
        return resp.status, dict(resp.headers), await resp.read()


def csv_rows(body: bytes) -> tuple[list[str], list[dict]]:
    reader = csv.reader(io.StringIO(body.decode()))
    header = next(reader)
    return header, [dict(zip(header, row)) for row in reader]


async def exported(client, kind: str, query: str = "") -> list[dict]:
    status, headers, body = await download(client, kind, query)
    assert status == 200, body
    return csv_rows(body)[1]


def z(text: str) -> str:
    return text.replace("+00:00", "Z")


async def listed_orders(client, query: str) -> list[dict]:
    """Every order the API's list gives for the query, through its pages."""
    found, cursor = [], None
    while True:
        status, page = await client.get(f"/b2b/v1/orders?limit=100&{query}" + (f"&cursor={cursor}" if cursor else ""))
        assert status == 200, page
        found += page["data"]
        if not page["has_more"]:
            return found
        cursor = page["next_cursor"]


@pytest.fixture
async def three_hours(stack, merchant):
    """Three orders an hour apart: the first unpaid, the second paid, the third paid and partly refunded."""
    first = await quick(merchant, amount="1.10")
    stack.clock.advance(HOUR)
    second = await paid_order(merchant, "2.20")
    stack.clock.advance(HOUR)
    third = await paid_order(merchant, "3.30")
    status, refund = await merchant_refund(merchant, third, "1.00")
    assert status == 201, refund
    reads = [(await merchant.get(f"/b2b/v1/orders/{oid}"))[1] for oid in (first["order_id"], second, third)]
    return reads


async def test_orders_of_a_range_as_csv_with_the_header_first(stack, merchant, three_hours):
    first, second, third = three_hours
    query = f"from={z(second['created_at'])}&to={z(third['created_at'])}"  # from inclusive, to exclusive
    status, headers, body = await download(merchant, "orders", query)
    assert status == 200
    assert headers["Content-Type"].startswith("text/csv")
    stamp = second["created_at"].replace("-", "").replace(":", "")
    assert headers["Content-Disposition"] == f'attachment; filename="orders-test-{stamp}-' \
                                             f'{third["created_at"].replace("-", "").replace(":", "")}.csv"'
    header, rows = csv_rows(body)
    assert header[:6] == ["order_id", "order_number", "livemode", "status", "currency", "amount_owed"]
    assert [r["order_id"] for r in rows] == [second["order_id"]]
    row = rows[0]
    assert (row["status"], row["currency"], row["amount_owed"], row["amount_paid"]) == ("PAID", "USD", "2.20", "2.20")
    assert row["created_at"] == second["created_at"] and row["created_at"].endswith("Z")
    assert row["paid_at"].endswith("Z") and row["paid_at"] >= row["created_at"]


async def test_jsonl_has_one_object_per_line(stack, merchant, three_hours):
    status, headers, body = await download(merchant, "orders", "format=jsonl")
    assert status == 200 and headers["Content-Type"] == "application/x-ndjson"
    assert headers["Content-Disposition"] == 'attachment; filename="orders-test-start-now.jsonl"'
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert [line["order_id"] for line in lines] == [o["order_id"] for o in three_hours]
    assert lines[0]["paid_at"] is None and lines[0]["amount_owed"] == "1.10" and lines[0]["currency"] == "USD"


async def test_payments_and_refunds_with_their_rails_and_destinations(stack, merchant, three_hours):
    _, second, third = three_hours
    payments = await exported(merchant, "payments")
    assert [(p["order_id"], p["amount"], p["rail"], p["network"], p["asset"]) for p in payments] == [
        (second["order_id"], "2.20", "chain", "sepolia", "USDT"),
        (third["order_id"], "3.30", "chain", "sepolia", "USDT")]
    assert payments[0]["transaction"] == second["payments"][0]["tx_hash"]
    assert payments[0]["confirmed_at"] == second["payments"][0]["received_at"]
    refunds = await exported(merchant, "refunds")
    assert [(r["order_id"], r["amount"], r["status"], r["destination"], r["source"], r["approved_by"])
            for r in refunds] == [(third["order_id"], "1.00", "APPROVED", DEST["refund_to_address"], "merchant",
                                   "merchant")]


async def test_totals_equal_the_lists_for_the_same_range(stack, merchant, three_hours):
    first, second, third = three_hours
    stack.clock.advance(HOUR)
    await paid_order(merchant, "9.99")  # after the range
    start = z(first["created_at"])
    end = z((datetime.fromisoformat(third["created_at"]) + timedelta(seconds=1)).isoformat())  # just after the third
    created = f"created_gte={start}&created_lt={end}"
    listed = await listed_orders(merchant, created)
    assert len(listed) == 3

    orders = await exported(merchant, "orders", f"from={start}&to={end}")
    for field in ("amount_owed", "amount_paid", "amount_refunded"):
        assert sum(Decimal(r[field]) for r in orders) == sum(Decimal(o[field]) for o in listed)

    payments = await exported(merchant, "payments", f"from={start}&to={end}&{created}")
    listed_payments = [p for o in listed for p in o["payments"] if start <= p["received_at"] < end]
    assert sum(Decimal(p["amount"]) for p in payments) == sum(Decimal(p["amount"]) for p in listed_payments) \
        == Decimal("5.50")

    refunds = await exported(merchant, "refunds", f"from={start}")
    listed_refunds = []
    for o in listed:
        listed_refunds += (await merchant.get(f"/b2b/v1/orders/{o['order_id']}/refunds"))[1]["data"]
    assert sum(Decimal(r["amount"]) for r in refunds) == sum(Decimal(r["amount"]) for r in listed_refunds) \
        == Decimal("1.00")


async def test_the_list_and_the_exports_filter_by_paid_time_and_status(stack, merchant, three_hours):
    first, second, third = three_hours
    paid_since = z(third["created_at"])
    listed = await listed_orders(merchant, f"paid_gte={paid_since}")
    assert [o["order_id"] for o in listed] == [third["order_id"]]
    listed = await listed_orders(merchant, f"paid_lt={paid_since}")
    assert [o["order_id"] for o in listed] == [second["order_id"]]  # an unpaid order has no paid time
    assert [r["order_id"] for r in await exported(merchant, "orders", f"paid_gte={paid_since}")] == [third["order_id"]]
    assert [r["order_id"] for r in await exported(merchant, "orders", "status=PENDING")] == [first["order_id"]]
    paid_before = await exported(merchant, "payments", f"paid_lt={paid_since}")
    assert [r["order_id"] for r in paid_before] == [second["order_id"]]
    listed = await listed_orders(merchant, f"created_lt={z(second['created_at'])}&status=PENDING")
    assert [o["order_id"] for o in listed] == [first["order_id"]]


async def test_a_buyers_formula_is_written_as_text(stack, merchant):
    order_id = await paid_order(merchant, "4.00")
    token = await minted(merchant, order_id, "4.00")
    formula = '=HYPERLINK("http://x","y")'
    status, _ = await Buyer(stack).submit(token["token"], "4.00", note=formula, reason="+1 broken")
    assert status == 201
    _, _, body = await download(merchant, "refunds")
    text = body.decode()
    assert f'"\'{formula.replace(chr(34), chr(34) * 2)}"' in text  # quoted, its quotes doubled, a ' before the =
    header, rows = csv_rows(body)
    assert rows[0]["note"] == "'" + formula and rows[0]["reason"] == "'+1 broken"
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row.values())
    _, _, raw = await download(merchant, "refunds", "format=jsonl")
    assert json.loads(raw)["note"] == formula  # JSON Lines keep the value as the buyer wrote it


@pytest.mark.parametrize("query, code, param", [
    ("from=yesterday", "invalid_time", "from"),
    ("to=2026-13-01", "invalid_time", "to"),
    ("format=xlsx", "invalid_format", "format"),
    ("from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "invalid_range", "from"),
    ("status=LOST", "invalid_status", "status"),
    ("paid_gte=soon", "invalid_time", "paid_gte"),
    ("limit=5", "unknown_parameter", "limit"),
])
async def test_bad_queries_are_named(merchant, query, code, param):
    status, headers, body = await download(merchant, "orders", query)
    assert status == 422
    error = json.loads(body)["error"]
    assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", code, param)


async def test_the_list_names_a_bad_time(merchant):
    status, body = await merchant.get("/b2b/v1/orders?created_gte=last-week")
    assert status == 422 and (body["error"]["code"], body["error"]["param"]) == ("invalid_time", "created_gte")


async def test_another_merchants_export_is_refused(stack, merchant):
    other = await stack.merchant("Other")  # the real clock: this test moves none
    path = f"/b2b/v1/merchants/{other.merchant_id}/exports/orders"
    headers = await merchant.fresh_headers("GET", path, b"")
    async with merchant.http.get(merchant.base_url + path, headers=headers) as resp:
        assert resp.status == 403 and (await resp.json())["error"]["code"] == "merchant_mismatch"


async def test_a_payment_is_exported_by_its_confirmation_time(stack, merchant):
    created = await quick(merchant, amount="5.00")
    stack.clock.advance(HOUR)
    status, _ = await pay(merchant, created["order_id"], "5.00")
    assert status == 201
    read = (await merchant.get(f"/b2b/v1/orders/{created['order_id']}"))[1]
    confirmed = z(read["payments"][0]["received_at"])
    assert await exported(merchant, "payments", f"to={confirmed}") == []
    assert [p["payment_id"] for p in await exported(merchant, "payments", f"from={confirmed}")] == \
        [read["payments"][0]["payment_id"]]
