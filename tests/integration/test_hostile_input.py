"""Hostile input that passes a signature check: always a 400 or 422 naming the field, never a 5xx, nothing written."""

from __future__ import annotations

import json

import pytest
from yarl import URL

from actors import messages as m
from actors.bus import CommandBus
from common.clock import utcnow
from common.ids import random_id
from tests.integration.helpers import QUICK, pay, quick

DEEP = 10_000


def _items(n: int) -> list[dict]:
    return [{"name": f"item {i}", "unit_amount": "1.00"} for i in range(n)]


# (name, raw body, status, code, param)
BODIES = [
    ("invalid-utf8-in-string", b'{"amount": "1.00", "external_ref": "a\xff\xfeb"}', 400, "invalid_json", None),
    ("invalid-utf8-in-key", b'{"amount": "1.00", "metadata": {"\xc3\x28": "x"}}', 400, "invalid_json", None),
    ("nul-in-external-ref", json.dumps({"amount": "1.00", "external_ref": "a\u0000b"}).encode(),
     422, "control_character", "external_ref"),
    ("bell-in-external-ref", json.dumps({"amount": "1.00", "external_ref": "a\u0007b"}).encode(),
     422, "control_character", "external_ref"),
    ("newline-in-external-ref", json.dumps({"amount": "1.00", "external_ref": "a\nb"}).encode(),
     422, "control_character", "external_ref"),
    ("c1-control-in-item-name", json.dumps({"line_items": [{"name": "a\u0085", "unit_amount": "1.00"}]}).encode(),
     422, "control_character", "line_items[0].name"),
    ("nul-in-metadata-key", json.dumps({"amount": "1.00", "metadata": {"k\u0000": "v"}}).encode(),
     422, "control_character", "metadata"),
    ("nul-in-metadata-value", json.dumps({"amount": "1.00", "metadata": {"k": "v\u0000"}}).encode(),
     422, "control_character", "metadata.k"),
    ("nul-in-amount", json.dumps({"amount": "1.00\u0000"}).encode(), 422, "control_character", "amount"),
    ("amount-nan", b'{"amount": NaN}', 400, "invalid_json", None),
    ("amount-infinity", b'{"amount": Infinity}', 400, "invalid_json", None),
    ("amount-1e309", b'{"amount": 1e309}', 422, "invalid_field", "amount"),
    ("deep-array", b"[" * DEEP + b"]" * DEEP, 400, "invalid_json", None),
    ("deep-in-metadata", b'{"amount": "1.00", "metadata": {"a": ' + b"[" * DEEP + b"]" * DEEP + b"}}",
     422, "invalid_field", "metadata"),
    ("deep-object", b'{"a":' * DEEP + b"1" + b"}" * DEEP, 422, "unknown_field", "a"),
    ("101-line-items", json.dumps({"line_items": _items(101)}).encode(), 422, "too_many_line_items", "line_items"),
]


async def _counts(stack) -> tuple[int, ...]:
    return tuple([await stack.pool.fetchval(f"SELECT count(*) FROM {t}")
                  for t in ("orders", "events", "checkout_sessions", "commands")])


@pytest.mark.parametrize("raw,status,code,param", [b[1:] for b in BODIES], ids=[b[0] for b in BODIES])
async def test_hostile_body_refused_naming_the_field(stack, merchant, raw, status, code, param):
    before = await _counts(stack)
    got, answer = await merchant.post(QUICK, raw=raw)
    assert got == status, answer
    assert answer["error"]["code"] == code
    assert answer["error"].get("param") == param
    assert await _counts(stack) == before


async def test_a_hundred_line_items_are_accepted(merchant):
    status, created = await merchant.post(QUICK, {"line_items": _items(100)})
    assert status == 201, created
    assert created["order"]["amount"] == "100.00"


async def test_tab_and_newline_allowed_in_free_text(stack, merchant):
    created = await quick(merchant)
    status, answer = await merchant.patch(f"/b2b/v1/orders/{created['order_id']}/cancel", {"reason": "line one\n\tline two"})
    assert status == 200, answer
    assert answer["metadata"]["cancel_note"] == "line one\n\tline two"


@pytest.mark.parametrize("path_id", ["ord_%00x", "ord_%01x", "%2E%2E", "ord_..", "a%2Fb", "ord_%0A", "x" * 300])
@pytest.mark.parametrize("method,template", [("GET", "/b2b/v1/orders/{}"), ("PATCH", "/b2b/v1/orders/{}/cancel"),
                                             ("GET", "/b2b/v1/refunds/{}")])
async def test_malformed_ids_in_paths(stack, merchant, method, template, path_id):
    before = await _counts(stack)
    path = template.format(path_id)
    # Sent as written: a client would otherwise resolve `%2E%2E` to a parent path before signing.
    async with stack.http.request(method, URL(stack.base_url + path, encoded=True),
                                  headers=merchant.headers(method, path, b"")) as resp:
        status, answer = resp.status, await resp.json()
    assert status == 400, answer
    assert answer["error"]["code"] == "invalid_id"
    assert answer["error"]["param"] in ("order_id", "refund_id")
    assert await _counts(stack) == before


@pytest.mark.parametrize("field,value", [("order_id", "ord_\u0000x"), ("order_id", "../ord_x"), ("order_id", "ord/x")])
async def test_malformed_ids_in_bodies(stack, merchant, field, value):
    status, answer = await merchant.post("/b2b/v1/checkout-sessions", {field: value})
    assert status == 422, answer
    assert answer["error"]["param"] == field


async def test_body_over_the_limit_is_refused_before_it_is_read(stack, merchant):
    raw = json.dumps({"amount": "1.00", "external_ref": "x" * (stack.settings.max_body_bytes + 1)}).encode()
    status, answer = await merchant.post(QUICK, raw=raw)
    assert status == 413
    assert answer["error"]["code"] == "request_too_large"


async def test_chunked_body_over_the_limit(stack, merchant):
    """No Content-Length to check up front: the limit still holds while reading."""
    limit = stack.settings.max_body_bytes

    async def chunks():
        for _ in range(limit // 65536 + 2):
            yield b"x" * 65536

    headers = merchant.headers("POST", QUICK, b"")
    async with stack.http.post(stack.base_url + QUICK, data=chunks(), headers=headers) as resp:
        assert resp.status == 413


@pytest.mark.parametrize("form,raw", [
    *[(form, raw) for form in ("", "/renewal") for raw in (b"{not json", b"[1, 2]", b'"text"', b"[" * DEEP + b"]" * DEEP)],
    ("", b'{"reason": "a\xffb"}'), ("/renewal", b'{"customer_note": "a\xffb"}'),
])
async def test_refund_form_answers_bad_json_with_400(stack, merchant, form, raw):
    status, minted = await _mint(merchant)
    assert status == 201, minted
    async with stack.http.post(f"{stack.base_url}/refund-request/{minted['token']}{form}", data=raw,
                               headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 400, await resp.text()
        assert (await resp.json())["error"]["code"] == "invalid_json"


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'{"network": "\xff"}', b"[" * DEEP + b"]" * DEEP])
async def test_payment_attempts_answer_bad_json_with_400_or_422(stack, merchant, raw):
    created = await quick(merchant)
    async with stack.http.post(f"{stack.base_url}/c/{created['session_key']}/payment-attempts", data=raw,
                               headers={"Content-Type": "application/json"}) as resp:
        assert resp.status in (400, 422), await resp.text()


async def test_refund_form_urlencoded_invalid_utf8_is_refused(stack, merchant):
    status, minted = await _mint(merchant)
    form = b"refund_to_address=0x%FF&refund_network=sepolia&refund_token_address=0x1&amount=1.00&reason=%FE"
    async with stack.http.post(f"{stack.base_url}/refund-request/{minted['token']}", data=form,
                               headers={"Content-Type": "application/x-www-form-urlencoded"}) as resp:
        assert resp.status in (400, 422), await resp.text()
        assert (await resp.json())["error"]["code"]


async def _mint(merchant):
    created = await quick(merchant)
    status, paid = await pay(merchant, created["order_id"], "10.00")
    assert status in (200, 201), paid
    return await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refund-requests",
                               {"ref_type": "order_id", "ref_value": created["order_id"], "amount": "5.00"})


async def test_a_command_the_database_refuses_for_its_content_is_422_not_retry(stack, merchant, redis, keys):
    """A command put on a stream by another writer (not the web layer, which refuses NUL): the database refuses
    its text, and the answer says that sending it again cannot help."""
    command = m.CreateOrder(order_id=random_id("ord"), merchant_id=merchant.merchant_id, livemode=False, at=utcnow(),
                            amount=1_000_000, external_ref="a\x00b")
    bus = CommandBus(redis, keys, f"test-{random_id('bus')}", 5)
    await bus.start()
    try:
        reply = await bus.ask(m.Envelope(command_id=random_id("cmd"), command=command))
    finally:
        await bus.stop()
    assert not reply.ok and (reply.error.status, reply.error.code) == (422, "command_refused")
    assert await stack.pool.fetchval("SELECT count(*) FROM orders WHERE order_id = $1", command.order_id) == 0
