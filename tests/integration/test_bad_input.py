"""Bad input: a 4xx naming the field, and nothing written."""

from __future__ import annotations

import pytest

QUICK = "/b2b/v1/checkout-sessions/quick"

# (name, path, body, status, code, param)
CASES = [
    ("amount-number", QUICK, {"amount": 10}, 422, "invalid_field", "amount"),
    ("amount-negative", QUICK, {"amount": "-1.00"}, 422, "invalid_amount", "amount"),
    ("amount-zero", QUICK, {"amount": "0"}, 422, "invalid_amount", "amount"),
    ("amount-seven-decimals", QUICK, {"amount": "1.0000001"}, 422, "invalid_amount", "amount"),
    ("amount-float-string", QUICK, {"amount": "1e3"}, 422, "invalid_amount", "amount"),
    ("amount-and-items", QUICK, {"amount": "1.00", "line_items": [{"name": "a", "unit_amount": "1.00"}]},
     422, "amount_and_line_items", "amount"),
    ("neither-amount-nor-items", QUICK, {"external_ref": "x"}, 422, "missing_field", "amount"),
    ("unknown-field", QUICK, {"amount": "1.00", "currency": "USD"}, 422, "unknown_field", "currency"),
    ("external-ref-256", QUICK, {"amount": "1.00", "external_ref": "x" * 256}, 422, "invalid_field", "external_ref"),
    ("external-ref-number", QUICK, {"amount": "1.00", "external_ref": 5}, 422, "invalid_field", "external_ref"),
    ("item-quantity-zero", QUICK, {"line_items": [{"name": "a", "unit_amount": "1.00", "quantity": 0}]},
     422, "invalid_field", "line_items[0].quantity"),
    ("item-unit-amount-bad", QUICK, {"line_items": [{"name": "a", "unit_amount": "1.1234567"}]},
     422, "invalid_amount", "line_items[0].unit_amount"),
    ("item-missing-name", QUICK, {"line_items": [{"unit_amount": "1.00"}]}, 422, "missing_field", "line_items[0].name"),
    ("item-unknown-field", QUICK, {"line_items": [{"name": "a", "unit_amount": "1.00", "sku": 1}]},
     422, "unknown_field", "line_items[0].sku"),
    ("items-empty", QUICK, {"line_items": []}, 422, "invalid_field", "line_items"),
    ("item-no-price", QUICK, {"line_items": [{"name": "a"}]}, 422, "missing_field", "line_items[0].unit_amount"),
    ("item-two-prices", QUICK, {"line_items": [{"name": "a", "unit_amount": "1.00", "price": "1.00"}]},
     422, "conflicting_fields", "line_items[0].unit_amount"),
    ("item-price-bad", QUICK, {"items": [{"name": "a", "price": "1.1234567"}]}, 422, "invalid_amount", "items[0].price"),
    ("items-and-line-items", QUICK, {"items": [{"name": "a", "price": "1"}], "line_items": [{"name": "a", "price": "1"}]},
     422, "conflicting_fields", "items"),
    ("metadata-not-strings", QUICK, {"amount": "1.00", "metadata": {"a": 1}}, 422, "invalid_field", "metadata"),
    ("ttl-zero", QUICK, {"amount": "1.00", "ttl_seconds": 0}, 422, "invalid_field", "ttl_seconds"),
    ("success-url-not-url", QUICK, {"amount": "1.00", "success_url": "javascript:alert(1)"}, 422, "invalid_field", "success_url"),
    ("body-not-object", QUICK, [1, 2], 400, "invalid_json", None),
    ("orders-amount-negative", "/b2b/v1/orders", {"amount": "-5"}, 422, "invalid_amount", "amount"),
    ("session-unknown-order", "/b2b/v1/checkout-sessions", {"order_id": "ord_nope"}, 404, "order_not_found", "order_id"),
    ("session-missing-order", "/b2b/v1/checkout-sessions", {}, 422, "missing_field", "order_id"),
    ("session-amount-due-bad", "/b2b/v1/checkout-sessions", {"order_id": "ord_x", "amount_due": "1.1234567"},
     422, "invalid_amount", "amount_due"),
]


async def _counts(stack):
    return tuple([await stack.pool.fetchval(f"SELECT count(*) FROM {t}") for t in ("orders", "events", "checkout_sessions")])


@pytest.mark.parametrize("path,body,status,code,param", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_refused_and_nothing_written(stack, merchant, path, body, status, code, param):
    before = await _counts(stack)
    got, answer = await merchant.post(path, body)
    assert got == status, answer
    assert answer["error"]["code"] == code
    assert answer["error"].get("param") == param
    assert answer["error"]["message"]
    assert await _counts(stack) == before


async def test_malformed_json(stack, merchant):
    status, answer = await merchant.post(QUICK, raw=b"{not json")
    assert (status, answer["error"]["code"]) == (400, "invalid_json")


async def test_unknown_order_read_and_cancel(merchant):
    for method, path in (("GET", "/b2b/v1/orders/ord_missing"), ("PATCH", "/b2b/v1/orders/ord_missing/cancel")):
        status, answer = await merchant.call(method, path)
        assert (status, answer["error"]["code"], answer["error"]["param"]) == (404, "order_not_found", "order_id")


@pytest.mark.parametrize("query,param", [("status=NOPE", "status"), ("limit=0", "limit"), ("limit=101", "limit"),
                                         ("cursor=bm90LWEtY3Vyc29y", "cursor"), ("colour=red", "colour")])
async def test_list_query_refused(merchant, query, param):
    status, answer = await merchant.get(f"/b2b/v1/orders?{query}")
    assert (status, answer["error"]["param"]) == (422, param)


async def test_unknown_route_is_json(merchant):
    status, answer = await merchant.get("/b2b/v1/nothing-here")
    assert (status, answer["error"]["code"]) == (404, "route_not_found")
