"""The provider's webhook: verified against the merchant's own secret, applied once, and harmless when it names
what is not this merchant's."""

from __future__ import annotations


def succeeded(payment_id: str, metadata: dict, cents: int = 1000, event_id: str = "evt_1") -> dict:
    return {"id": event_id, "object": "event", "type": "payment_intent.succeeded", "livemode": False,
            "created": 1, "data": {"object": {"id": payment_id, "object": "payment_intent", "amount": cents,
                                               "amount_received": cents, "currency": "usd", "status": "succeeded",
                                               "metadata": metadata}}}


def ours(card_merchant, created: dict) -> dict:
    return {"order_id": created["order_id"], "session_id": created.get("session_id", ""),
            "merchant_id": card_merchant.merchant_id, "livemode": "false"}


async def commands_of(pool, order_id: str) -> int:
    return await pool.fetchval("SELECT count(*) FROM commands WHERE order_id = $1", order_id)


async def test_a_bad_or_missing_signature_is_400_and_writes_nothing(card_merchant):
    created = await card_merchant.session()
    payload, headers = card_merchant.signed(succeeded("pi_forged", ours(card_merchant, created)),
                                            secret="whsec_not_the_merchants")
    before = await commands_of(card_merchant.stack.pool, created["order_id"])
    status, body = await card_merchant.deliver(payload, headers)
    assert status == 400 and body["error"]["code"] == "invalid_signature"
    status, body = await card_merchant.deliver(payload, {"Content-Type": "application/json"})
    assert status == 400 and body["error"]["param"] == "Stripe-Signature"
    assert await commands_of(card_merchant.stack.pool, created["order_id"]) == before
    assert (await card_merchant.order(created["order_id"]))["status"] == "PENDING"


async def test_the_same_event_delivered_twice_is_applied_once(card_merchant):
    created = await card_merchant.session()
    payload, headers = card_merchant.signed(succeeded("pi_twice", ours(card_merchant, created)))
    for _ in range(2):
        status, body = await card_merchant.deliver(payload, headers)
        assert status == 200 and body["applied"] is True
    # and once more as a fresh event about the same payment (the provider retrying with a new delivery)
    payload, headers = card_merchant.signed(succeeded("pi_twice", ours(card_merchant, created), event_id="evt_2"))
    assert (await card_merchant.deliver(payload, headers))[0] == 200
    paid = await card_merchant.order(created["order_id"])
    assert paid["status"] == "PAID" and paid["amount_paid"] == "10.00" and len(paid["payments"]) == 1
    events = [r["type"] for r in await card_merchant.stack.pool.fetch(
        "SELECT type FROM events WHERE order_id = $1", created["order_id"])]
    assert events.count("payment.settled") == 1 and events.count("payment.received") == 1


async def test_an_event_naming_an_unknown_payment_is_200_and_writes_nothing(card_merchant):
    metadata = {"order_id": "ord_0000000000000000000000000000", "merchant_id": card_merchant.merchant_id,
                "livemode": "false"}
    payload, headers = card_merchant.signed(succeeded("pi_unknown", metadata))
    status, body = await card_merchant.deliver(payload, headers)
    assert status == 200 and body["applied"] is False
    assert await commands_of(card_merchant.stack.pool, metadata["order_id"]) == 0
    # and one about a payment that is not the service's at all
    payload, headers = card_merchant.signed(succeeded("pi_elsewhere", {}))
    assert (await card_merchant.deliver(payload, headers)) == (200, {"received": True, "applied": False})


async def test_an_event_about_another_merchants_payment_is_ignored(card_stack, card_merchant):
    created = await card_merchant.session()
    other = await card_stack.merchant()
    metadata = {**ours(card_merchant, created), "merchant_id": other.merchant_id}
    payload, headers = card_merchant.signed(succeeded("pi_other", metadata))
    status, body = await card_merchant.deliver(payload, headers)
    assert status == 200 and body["applied"] is False
    assert (await card_merchant.order(created["order_id"]))["status"] == "PENDING"

