"""A command writes the rows it changed and no others: a refund writes its own row and the order's, not every
earlier refund or the session again. PostgreSQL's xmin (the transaction that wrote a row version) shows it. The
order's JSON is written once, as its state: a recorded answer names the version it answered, and a retry made
after the order moved on gets the first answer again, byte for byte, rebuilt from the order's events."""

from __future__ import annotations

import msgspec

from tests.integration.helpers import QUICK, pay
from tests.integration.test_refunds_api import merchant_refund, paid_order


async def _writers(stack, order_id: str) -> dict[str, int]:
    rows = await stack.pool.fetch(
        "SELECT 'order' AS name, xmin::text::bigint AS xmin FROM orders WHERE order_id = $1"
        " UNION ALL SELECT session_id, xmin::text::bigint FROM checkout_sessions WHERE order_id = $1"
        " UNION ALL SELECT refund_id, xmin::text::bigint FROM refunds WHERE order_id = $1", order_id)
    return {r["name"]: r["xmin"] for r in rows}


async def test_a_refund_writes_its_own_row_and_the_orders_and_leaves_the_rest(stack, merchant):
    order_id = await paid_order(merchant)
    status, first = await merchant_refund(merchant, order_id, "1.00")
    assert status == 201, first
    before = await _writers(stack, order_id)
    status, second = await merchant_refund(merchant, order_id, "2.00")
    assert status == 201, second
    after = await _writers(stack, order_id)
    assert set(after) == set(before) | {second["refund_id"]}
    assert after["order"] != before["order"]
    assert {name: x for name, x in after.items() if name not in ("order", second["refund_id"])} == \
        {name: x for name, x in before.items() if name != "order"}

    status, executed = await merchant.post(f"/b2b/v1/test-helpers/refunds/{first['refund_id']}/execute",
                                           {"tx_hash": "0x" + "cd" * 32})
    assert (status, executed["status"]) == (200, "EXECUTED"), executed
    last = await _writers(stack, order_id)
    assert last[first["refund_id"]] != after[first["refund_id"]]  # its status changed: written
    assert last[second["refund_id"]] == after[second["refund_id"]]
    stored = await stack.pool.fetchval("SELECT status FROM refunds WHERE refund_id = $1", first["refund_id"])
    assert stored == "EXECUTED"


async def test_a_recorded_answer_names_its_version_and_a_later_retry_gets_the_first_answer_byte_for_byte(stack,
                                                                                                          merchant):
    body = b'{"amount": "6.00", "external_ref": "answered-once"}'

    async def keyed() -> tuple[int, bytes]:
        # A later second on each call: a signature seen before would be refused as a replay.
        headers = await merchant.fresh_headers("POST", QUICK, body) | {"Idempotency-Key": "answered-once"}
        async with stack.http.post(stack.base_url + QUICK, data=body, headers=headers) as resp:
            return resp.status, await resp.read()

    status, first = await keyed()
    assert status == 201, first
    order_id = msgspec.json.decode(first)["order_id"]
    recorded = await stack.pool.fetchrow("SELECT reply, version FROM commands WHERE order_id = $1", order_id)
    assert recorded["version"] == 2 and b"session_key" not in recorded["reply"]  # no copy of the order
    assert (await pay(merchant, order_id, "6.00"))[0] in (200, 201)
    assert await keyed() == (201, first)  # PENDING with its open session, as first answered
