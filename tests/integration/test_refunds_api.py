"""docs/spec.md §3.1 through the HTTP API: each row a case with its events; refusals leave nothing written."""

from __future__ import annotations

import asyncio

import pytest

from tests.integration.helpers import USDT, order, pay, quick

DEST = {"refund_to_address": "0x52908400098527886E0F7030069857D2E4169EE7", "refund_network": "sepolia",
        "refund_token_address": USDT}


async def paid_order(client, amount: str = "10.00") -> str:
    order_id = (await quick(client, amount=amount))["order_id"]
    status, _ = await pay(client, order_id, amount)
    assert status == 201
    return order_id


async def merchant_refund(client, order_id: str, amount: str, **extra):
    return await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds",
                             {"order_id": order_id, "amount": amount, "reason": "damaged", **DEST, **extra})


async def customer_refund(client, order_id: str, amount: str):
    return await client.post(f"/b2b/v1/merchants/{client.merchant_id}/customer-refunds",
                             {"order_id": order_id, "amount": amount, "reason": "changed mind", "note": "thanks", **DEST})


async def events(stack, order_id: str, since: int = 0) -> list[str]:
    rows = await stack.pool.fetch("SELECT type FROM events WHERE order_id = $1 AND seq > $2 ORDER BY seq",
                                  order_id, since)
    return [r["type"] for r in rows]


async def last_seq(stack, order_id: str) -> int:
    return await stack.pool.fetchval("SELECT coalesce(max(seq), 0) FROM events WHERE order_id = $1", order_id)


async def set_auto_approve(stack, client, on: bool):
    """Auto-approval is both modes' setting: changed with the merchant's live key (a test key is refused it)."""
    live = await stack.other_mode(client, livemode=True)
    status, body = await live.patch(f"/b2b/v1/merchants/{client.merchant_id}/settings",
                                      {"auto_approve_customer_refunds": on})
    assert status == 200 and body["auto_approve_customer_refunds"] is on


# Each row: (name, setup returning refund id or None, trigger, refund status, order status, events)
async def _none(stack, client, order_id):
    return None


async def _pending(stack, client, order_id):
    return (await customer_refund(client, order_id, "4.00"))[1]["refund_id"]


async def _approved(stack, client, order_id):
    return (await merchant_refund(client, order_id, "4.00"))[1]["refund_id"]


async def _t_merchant(stack, client, order_id, refund_id):
    return await merchant_refund(client, order_id, "4.00")


async def _t_customer(stack, client, order_id, refund_id):
    await set_auto_approve(stack, client, False)
    return await customer_refund(client, order_id, "4.00")


async def _t_customer_auto(stack, client, order_id, refund_id):
    await set_auto_approve(stack, client, True)
    try:
        return await customer_refund(client, order_id, "4.00")
    finally:
        await set_auto_approve(stack, client, False)


async def _t_approve(stack, client, order_id, refund_id):
    return await client.post(f"/b2b/v1/refunds/{refund_id}/approve")


async def _t_reject(stack, client, order_id, refund_id):
    return await client.post(f"/b2b/v1/refunds/{refund_id}/reject", {"reason": "not eligible"})


async def _t_execute(stack, client, order_id, refund_id):
    return await client.post(f"/b2b/v1/test-helpers/refunds/{refund_id}/execute", {"tx_hash": "0x" + "ab" * 32})


async def _t_cancel(stack, client, order_id, refund_id):
    return await client.post(f"/b2b/v1/refunds/{refund_id}/cancel")


ROWS = [
    ("none-merchant-call-approved", _none, _t_merchant, 201, "APPROVED", "PAID",
     ["payment.refund.requested", "payment.refund.approved"]),
    ("none-customer-flow-pending", _none, _t_customer, 201, "PENDING", "PAID", ["payment.refund.requested"]),
    ("none-customer-flow-auto-approved", _none, _t_customer_auto, 201, "APPROVED", "PAID",
     ["payment.refund.requested", "payment.refund.approved"]),
    ("pending-approve-approved", _pending, _t_approve, 200, "APPROVED", "PAID", ["payment.refund.approved"]),
    ("pending-reject-rejected", _pending, _t_reject, 200, "REJECTED", "PAID", ["payment.refund.rejected"]),
    ("approved-executed-partially-refunded", _approved, _t_execute, 200, "EXECUTED", "PARTIALLY_REFUNDED",
     ["payment.refund.executed"]),
    ("approved-cancel-before-execution-rejected", _approved, _t_cancel, 200, "REJECTED", "PAID",
     ["payment.refund.canceled"]),
]


@pytest.mark.parametrize("setup,trigger,http,refund_status,order_status,types", [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
async def test_refund_row(stack, merchant, setup, trigger, http, refund_status, order_status, types):
    order_id = await paid_order(merchant)
    refund_id = await setup(stack, merchant, order_id)
    since = await last_seq(stack, order_id)
    status, body = await trigger(stack, merchant, order_id, refund_id)
    assert status == http, body
    assert body["status"] == refund_status
    assert await events(stack, order_id, since) == types
    current = await order(merchant, order_id)
    assert current["status"] == order_status
    status, read = await merchant.get(f"/b2b/v1/refunds/{body['refund_id']}")
    assert status == 200 and read["status"] == refund_status


FINAL_ACTIONS = ["approve", "reject", "cancel"]


@pytest.mark.parametrize("final", ["REJECTED", "EXECUTED"])
@pytest.mark.parametrize("action", FINAL_ACTIONS)
async def test_final_states_refuse_every_move(stack, merchant, final, action):
    order_id = await paid_order(merchant)
    refund_id = (await merchant_refund(merchant, order_id, "2.00"))[1]["refund_id"]
    if final == "REJECTED":
        await merchant.post(f"/b2b/v1/refunds/{refund_id}/cancel")
    else:
        await merchant.post(f"/b2b/v1/test-helpers/refunds/{refund_id}/execute")
    since = await last_seq(stack, order_id)
    status, body = await merchant.post(f"/b2b/v1/refunds/{refund_id}/{action}")
    assert (status, body["error"]["code"]) == (409, "refund_state_conflict")
    assert await events(stack, order_id, since) == []


async def test_full_refund_executed_moves_order_to_refunded(merchant):
    order_id = await paid_order(merchant, "10.00")
    first = (await merchant_refund(merchant, order_id, "6.00"))[1]["refund_id"]
    second = (await merchant_refund(merchant, order_id, "4.00"))[1]["refund_id"]
    await merchant.post(f"/b2b/v1/test-helpers/refunds/{first}/execute")
    assert (await order(merchant, order_id))["status"] == "PARTIALLY_REFUNDED"
    await merchant.post(f"/b2b/v1/test-helpers/refunds/{second}/execute")
    body = await order(merchant, order_id)
    assert (body["status"], body["amount_refunded"]) == ("REFUNDED", "10.00")


async def test_partial_paid_order_refund_moves_it(merchant):
    order_id = (await quick(merchant, amount="10.00"))["order_id"]
    await pay(merchant, order_id, "4.00")
    refund_id = (await merchant_refund(merchant, order_id, "4.00"))[1]["refund_id"]
    await merchant.post(f"/b2b/v1/test-helpers/refunds/{refund_id}/execute")
    assert (await order(merchant, order_id))["status"] == "REFUNDED"


REFUSALS = [
    ("above-refundable", {"amount": "10.01"}, 409, "amount_exceeds_refundable", "amount"),
    ("seven-decimals", {"amount": "1.0000001"}, 422, "invalid_amount", "amount"),
    ("currency-field", {"currency": "USD"}, 422, "unknown_field", "currency"),
    ("missing-destination", {"refund_to_address": None}, 422, "missing_field", "refund_to_address"),
    ("unknown-network", {"refund_network": "dogechain"}, 422, "unknown_network", "refund_network"),
    ("unknown-token", {"refund_token_address": "0x52908400098527886E0F7030069857D2E4169EE7"}, 422,
     "unknown_token", "refund_token_address"),
    ("bad-evm-checksum", {"refund_to_address": "0x52908400098527886e0F7030069857D2E4169EE7"}, 422,
     "invalid_address", "refund_to_address"),
    ("solana-address-on-evm", {"refund_to_address": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}, 422,
     "invalid_address", "refund_to_address"),
    ("tron-bad-checksum", {"refund_network": "tron-nile", "refund_token_address": "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf",
                           "refund_to_address": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"}, 422, "invalid_address",
     "refund_to_address"),
    ("ton-garbage", {"refund_network": "ton-testnet", "refund_token_address": "kQD0GKBM8ZbryVk2aESmzfU6b9b_8era_IkvBSELujFZPsyy",
                     "refund_to_address": "EQ-not-an-address"}, 422, "invalid_address", "refund_to_address"),
    ("solana-bad-pubkey", {"refund_network": "solana-devnet", "refund_token_address": "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
                           "refund_to_address": "0OIl"}, 422, "invalid_address", "refund_to_address"),
    ("live-network", {"refund_network": "polygon"}, 422, "testnet_required", "refund_network"),
    ("unknown-order", {"order_id": "ord_nope"}, 404, "order_not_found", "order_id"),
    ("token-left-out-no-payment-there", {"refund_network": "polygon", "refund_token_address": None}, 422,
     "missing_field", "refund_token_address"),
]


@pytest.mark.parametrize("change,status,code,param", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
async def test_refund_refused_nothing_written(stack, merchant, change, status, code, param):
    order_id = await paid_order(merchant)
    payload = {"order_id": order_id, "amount": "5.00", "reason": "r", **DEST, **change}
    payload = {k: v for k, v in payload.items() if v is not None}
    since = await last_seq(stack, order_id)
    got, body = await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refunds", payload)
    assert (got, body["error"]["code"], body["error"].get("param")) == (status, code, param), body
    assert await events(stack, order_id, since) == []
    assert await stack.pool.fetchval("SELECT count(*) FROM refunds WHERE order_id = $1", order_id) == 0


async def test_refund_on_unpaid_order_refused(stack, merchant):
    order_id = (await quick(merchant))["order_id"]
    status, body = await merchant_refund(merchant, order_id, "1.00")
    assert (status, body["error"]["code"]) == (409, "order_not_paid")


async def test_refund_for_another_merchant_forbidden(stack, merchant):
    other = await stack.merchant("Other")
    order_id = await paid_order(merchant)
    status, body = await other.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refunds",
                                    {"order_id": order_id, "amount": "1.00", **DEST})
    assert (status, body["error"]["code"]) == (403, "merchant_mismatch")
    status, body = await merchant_refund(other, order_id, "1.00")
    assert (status, body["error"]["code"]) == (404, "order_not_found")


async def test_rejected_refund_frees_the_balance(merchant):
    order_id = await paid_order(merchant, "10.00")
    pending = (await customer_refund(merchant, order_id, "10.00"))[1]["refund_id"]
    assert (await merchant_refund(merchant, order_id, "0.01"))[0] == 409
    await merchant.post(f"/b2b/v1/refunds/{pending}/reject")
    assert (await merchant_refund(merchant, order_id, "10.00"))[0] == 201


async def test_twenty_concurrent_refunds_never_exceed_paid(stack, merchant):
    order_id = await paid_order(merchant, "10.00")
    answers = await asyncio.gather(*[merchant_refund(merchant, order_id, "0.75", reason=f"r{n}") for n in range(20)])
    created = [body for status, body in answers if status == 201]
    refused = [body for status, body in answers if status != 201]
    assert len(created) == 13 and all(b["error"]["code"] == "amount_exceeds_refundable" for b in refused)
    total = await stack.pool.fetchval("SELECT sum(amount) FROM refunds WHERE order_id = $1", order_id)
    assert total == 13 * 750_000 <= 10_000_000


async def test_order_refunds_listing_and_order_totals(merchant):
    order_id = await paid_order(merchant)
    first = (await merchant_refund(merchant, order_id, "1.00"))[1]
    second = (await customer_refund(merchant, order_id, "2.00"))[1]
    status, listing = await merchant.get(f"/b2b/v1/orders/{order_id}/refunds")
    assert status == 200
    assert [(r["refund_id"], r["status"], r["amount"]) for r in listing["data"]] == [
        (first["refund_id"], "APPROVED", "1.00"), (second["refund_id"], "PENDING", "2.00")]
    assert second["metadata"] == {"note": "thanks"} and second["source"] == "customer"
    assert second["status_url"].endswith(f"/r/{second['link_token']}")


TX = "0x" + "1f" * 32


async def submit_tx(client, refund_id: str, **body):
    payload = {"tx_hash": TX, "network": "sepolia", "token_address": USDT, **body}
    return await client.post(f"/b2b/v1/refunds/{refund_id}/submit-tx", payload)


async def test_submit_tx_answers_at_once_with_verification(stack, merchant):
    order_id = await paid_order(merchant)
    refund_id = (await merchant_refund(merchant, order_id, "3.00"))[1]["refund_id"]
    status, body = await submit_tx(merchant, refund_id)
    assert status == 202, body
    assert body["status"] == "APPROVED"
    assert (body["verification"]["status"], body["verification"]["tx_hash"], body["verification"]["required"]) == (
        "verifying", TX, 64)
    again = await submit_tx(merchant, refund_id)
    assert again[0] == 202  # the same transaction posted twice is one attempt
    status, read = await merchant.get(f"/b2b/v1/refunds/{refund_id}")
    assert [t["tx_hash"] for t in read["transactions"]] == [TX]


SUBMIT_REFUSALS = [
    ("missing-hash", {"tx_hash": None}, 422, "missing_field", "tx_hash"),
    ("missing-network", {"network": None}, 422, "missing_field", "network"),
    ("missing-token", {"token_address": None}, 422, "missing_field", "token_address"),
    ("evm-hash-without-0x", {"tx_hash": "1f" * 32}, 422, "invalid_tx_hash", "tx_hash"),
    ("evm-hash-too-short", {"tx_hash": "0x1234"}, 422, "invalid_tx_hash", "tx_hash"),
    ("unknown-network", {"network": "nowhere"}, 422, "unknown_network", "network"),
    ("unknown-token", {"token_address": "0x52908400098527886E0F7030069857D2E4169EE7"}, 422, "unknown_token",
     "token_address"),
    ("other-network", {"network": "polygon", "token_address": "0xc2132D05D31c914a87C6611C10748AEb04B58e8F"}, 422,
     "network_mismatch", "network"),
]


@pytest.mark.parametrize("change,status,code,param", [r[1:] for r in SUBMIT_REFUSALS],
                         ids=[r[0] for r in SUBMIT_REFUSALS])
async def test_submit_tx_refused(stack, merchant, change, status, code, param):
    order_id = await paid_order(merchant)
    refund_id = (await merchant_refund(merchant, order_id, "3.00"))[1]["refund_id"]
    payload = {k: v for k, v in {"tx_hash": TX, "network": "sepolia", "token_address": USDT, **change}.items()
               if v is not None}
    got, body = await merchant.post(f"/b2b/v1/refunds/{refund_id}/submit-tx", payload)
    assert (got, body["error"]["code"], body["error"].get("param")) == (status, code, param), body
    assert await stack.pool.fetchval("SELECT count(*) FROM refund_transactions WHERE refund_id = $1", refund_id) == 0


async def test_one_transaction_cannot_pay_two_refunds(stack, merchant):
    other = await stack.merchant("Another shop")
    first = (await merchant_refund(merchant, await paid_order(merchant), "1.00"))[1]["refund_id"]
    second = (await merchant_refund(other, await paid_order(other), "1.00"))[1]["refund_id"]
    tx = "0x" + "2e" * 32
    assert (await submit_tx(merchant, first, tx_hash=tx))[0] == 202
    status, body = await submit_tx(other, second, tx_hash=tx)
    assert (status, body["error"]["code"]) == (409, "tx_hash_already_used")


async def test_submit_tx_on_pending_refund_refused(stack, merchant):
    order_id = await paid_order(merchant)
    refund_id = (await customer_refund(merchant, order_id, "1.00"))[1]["refund_id"]
    status, body = await submit_tx(merchant, refund_id)
    assert (status, body["error"]["code"]) == (409, "refund_state_conflict")
    assert await stack.pool.fetchval("SELECT count(*) FROM refund_transactions WHERE refund_id = $1", refund_id) == 0


@pytest.mark.parametrize("method", ["POST", "PATCH"])
@pytest.mark.parametrize("action,status", [("approve", "APPROVED"), ("reject", "REJECTED")])
async def test_review_answers_either_method(merchant, method, action, status):
    order_id = await paid_order(merchant)
    pending = (await customer_refund(merchant, order_id, "1.00"))[1]["refund_id"]
    code, body = await merchant.call(method, f"/b2b/v1/refunds/{pending}/{action}", {})
    assert (code, body["status"]) == (200, status)
    assert body["linkToken"] == body["link_token"]


@pytest.mark.parametrize("left_out", [("refund_token_address",), ("refund_network", "refund_token_address")])
async def test_destination_defaults_to_the_payment(merchant, left_out):
    order_id = await paid_order(merchant)
    payload = {"order_id": order_id, "amount": "1.00", **{k: v for k, v in DEST.items() if k not in left_out}}
    status, refund = await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refunds", payload)
    assert status == 201, refund
    assert (refund["refund_network"], refund["refund_token_address"]) == ("sepolia", USDT)
