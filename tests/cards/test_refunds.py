"""Refunds on card-paid orders: no destination asked, sent to the provider by the service exactly once, EXECUTED on
the provider's word; a refusal stays visible on an APPROVED refund that can be retried."""

from __future__ import annotations

import pytest

from cards.provider import ProviderRefused, ProviderUnavailable
from tests.integration.helpers import until

REFUNDS = "/b2b/v1/merchants/{}/refunds"


async def refund(card_merchant, order_id: str, amount: str, **extra) -> tuple[int, dict]:
    return await card_merchant.client.post(REFUNDS.format(card_merchant.merchant_id),
                                           {"order_id": order_id, "amount": amount, "reason": "returned", **extra})


async def event_types(pool, order_id: str) -> list[str]:
    return [r["type"] for r in await pool.fetch("SELECT type FROM events WHERE order_id = $1 ORDER BY seq", order_id)]


async def test_a_card_refund_is_sent_by_the_service_and_executed_with_the_providers_refund_id(card_merchant, sender):
    paid = await card_merchant.paid_order("10.00")
    status, created = await refund(card_merchant, paid["order_id"], "4.00")
    assert status == 201, created
    assert created["status"] == "APPROVED" and created["refund_network"] == "card"
    assert created["refund_to_address"] == "" and created["refund_token_address"] == ""
    assert await sender.run_once() >= 1
    status, executed = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert executed["status"] == "EXECUTED", executed
    [provider_refund] = await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"])
    assert executed["execution"]["tx_hash"] == provider_refund.id and executed["execution"]["network"] == "card"
    assert provider_refund.amount == 400 and provider_refund.metadata["refund_id"] == created["refund_id"]
    order = await card_merchant.order(paid["order_id"])
    assert order["status"] == "PARTIALLY_REFUNDED" and order["amount_refunded"] == "4.00"
    assert "payment.refund.executed" in await event_types(card_merchant.stack.pool, paid["order_id"])
    await sender.run_once()  # another pass sends nothing again
    assert len(await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"])) == 1


async def test_destination_fields_are_ignored_on_the_card_rail(card_merchant, sender):
    paid = await card_merchant.paid_order()
    status, created = await refund(card_merchant, paid["order_id"], "10.00", refund_network="card",
                                   refund_to_address="0x000000000000000000000000000000000000dEaD",
                                   refund_token_address="anything")
    assert status == 201 and created["refund_to_address"] == "" and created["refund_network"] == "card"
    await sender.run_once()
    assert (await card_merchant.order(paid["order_id"]))["status"] == "REFUNDED"


async def test_a_card_refund_never_exceeds_what_was_paid_by_card(card_merchant):
    paid = await card_merchant.paid_order("10.00")
    # The same order also received 5.00 on chain (the test helper's payment): 15.00 paid, 10.00 of it by card.
    status, body = await card_merchant.client.post(f"/b2b/v1/test-helpers/orders/{paid['order_id']}/payments", {
        "amount": "5.00", "network": "sepolia", "token_address": "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"})
    assert status == 201, body
    status, body = await refund(card_merchant, paid["order_id"], "10.01", refund_network="card")
    assert status == 409 and body["error"]["code"] == "amount_exceeds_card_paid" and body["error"]["param"] == "amount"
    status, body = await refund(card_merchant, paid["order_id"], "10.00", refund_network="card")
    assert status == 201, body
    status, body = await refund(card_merchant, paid["order_id"], "0.01", refund_network="card")
    assert status == 409 and body["error"]["code"] == "amount_exceeds_card_paid"


async def test_a_card_refund_finer_than_a_cent_is_refused_naming_amount(card_merchant):
    paid = await card_merchant.paid_order()
    status, body = await refund(card_merchant, paid["order_id"], "1.001")
    assert status == 422 and body["error"]["param"] == "amount"
    status, listed = await card_merchant.client.get(f"/b2b/v1/orders/{paid['order_id']}/refunds")
    assert listed["data"] == []


async def test_an_approved_card_refund_cannot_be_canceled(card_merchant):
    paid = await card_merchant.paid_order()
    status, created = await refund(card_merchant, paid["order_id"], "1.00")
    status, body = await card_merchant.client.post(f"/b2b/v1/refunds/{created['refund_id']}/cancel", {})
    assert status == 409 and body["error"]["code"] == "refund_sent_to_provider"


class Refusing:
    """The real adapter, except that the provider refuses (or cannot be reached for) one refund's next creation."""

    def __init__(self, real, fault: Exception, refund_id: str, left: dict):
        self.real, self.fault, self.refund_id, self.left = real, fault, refund_id, left

    def __getattr__(self, name):
        return getattr(self.real, name)

    async def create_refund(self, payment_id, cents, metadata, key):
        if metadata["refund_id"] == self.refund_id and self.left["times"]:
            self.left["times"] -= 1
            raise self.fault
        return await self.real.create_refund(payment_id, cents, metadata, key)


def faulty(sender, fault: Exception, refund_id: str):
    opener, left = sender.opener, {"times": 1}
    sender.opener = lambda account, settings: Refusing(opener(account, settings), fault, refund_id, left)


async def test_a_provider_refusal_leaves_the_refund_approved_with_the_failure_visible_and_retryable(
        card_merchant, sender):
    paid = await card_merchant.paid_order()
    status, created = await refund(card_merchant, paid["order_id"], "3.00")
    faulty(sender, ProviderRefused("charge_already_refunded"), created["refund_id"])
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert read["status"] == "APPROVED"
    [failed] = read["transactions"]
    assert failed["network"] == "card" and failed["status"] == "failed" and "charge_already_refunded" in failed["reason"]
    assert "payment.refund.tx_failed" in await event_types(card_merchant.stack.pool, paid["order_id"])
    await sender.run_once()  # a refusal is not sent again on its own
    assert await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"]) == []
    status, retried = await card_merchant.client.post(f"/b2b/v1/refunds/{created['refund_id']}/retry", {})
    assert status == 200 and retried["status"] == "APPROVED"
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert read["status"] == "EXECUTED"
    [provider_refund] = await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"])
    assert read["execution"]["tx_hash"] == provider_refund.id


async def test_retry_is_refused_unless_the_provider_refused(card_merchant):
    paid = await card_merchant.paid_order()
    status, created = await refund(card_merchant, paid["order_id"], "3.00")
    status, body = await card_merchant.client.post(f"/b2b/v1/refunds/{created['refund_id']}/retry", {})
    assert status == 409 and body["error"]["code"] == "refund_not_refused"


async def test_the_provider_unreachable_leaves_the_refund_approved_and_the_next_pass_sends_it(card_merchant, sender):
    paid = await card_merchant.paid_order()
    status, created = await refund(card_merchant, paid["order_id"], "2.00")
    faulty(sender, ProviderUnavailable("APIConnectionError: connection refused"), created["refund_id"])
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert read["status"] == "APPROVED" and read["transactions"] == []  # nothing half-written
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert read["status"] == "EXECUTED"
    assert len(await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"])) == 1


async def test_a_refund_webhook_from_the_provider_is_applied_once(card_merchant, sender):
    paid = await card_merchant.paid_order()
    status, created = await refund(card_merchant, paid["order_id"], "1.00")
    await sender.run_once()
    [provider_refund] = await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"])
    event = {"id": "evt_refund", "object": "event", "type": "refund.updated", "livemode": False, "created": 1,
             "data": {"object": provider_refund.to_dict()}}
    payload, headers = card_merchant.signed(event)
    for _ in range(2):
        status, body = await card_merchant.deliver(payload, headers)
        assert status == 200
    events = await event_types(card_merchant.stack.pool, paid["order_id"])
    assert events.count("payment.refund.executed") == 1


@pytest.mark.parametrize("amount", ["10.00"])
async def test_a_full_card_refund_makes_the_order_refunded(card_merchant, sender, amount):
    paid = await card_merchant.paid_order(amount)
    await refund(card_merchant, paid["order_id"], amount)
    await sender.run_once()
    done = await until(card_merchant.client, paid["order_id"], lambda o: o["status"] == "REFUNDED")
    assert done["status"] == "REFUNDED" and done["amount_refunded"] == amount


async def test_the_buyers_refund_form_asks_no_address_for_a_card_paid_order(card_merchant, sender):
    paid = await card_merchant.paid_order()
    status, minted = await card_merchant.client.post(
        f"/b2b/v1/merchants/{card_merchant.merchant_id}/refund-requests",
        {"ref_type": "order_id", "ref_value": paid["order_id"], "amount": "5.00"})
    assert status == 201, minted
    http, base = card_merchant.stack.http, card_merchant.stack.base_url
    async with http.get(f"{base}/refund-request/{minted['token']}") as page:
        html = await page.text()
    assert 'data-testid="refund-to-card"' in html and 'name="refund_to_address"' not in html
    async with http.post(f"{base}/refund-request/{minted['token']}", json={"amount": "5.00", "reason": "broken"}) as sent:
        body = await sent.json()
    assert sent.status == 201, body
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{body['refundId']}")
    assert read["status"] == "PENDING" and read["refund_network"] == "card" and read["refund_to_address"] == ""
    await card_merchant.client.post(f"/b2b/v1/refunds/{body['refundId']}/approve", {})
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{body['refundId']}")
    assert read["status"] == "EXECUTED" and read["execution"]["network"] == "card"


async def test_refused_refunds_never_crowd_out_the_ones_due(card_merchant, sender, monkeypatch):
    from cards import refunds as sending

    paid = await card_merchant.paid_order()
    status, refused = await refund(card_merchant, paid["order_id"], "1.00")
    faulty(sender, ProviderRefused("declined"), refused["refund_id"])
    await sender.run_once()
    monkeypatch.setattr(sending, "BATCH", 1)  # one order per pass: never the refused refund's again
    status, due = await refund(card_merchant, paid["order_id"], "2.00")
    for _ in range(10):  # earlier tests' refunds still due go first, oldest first
        await sender.run_once()
        status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{due['refund_id']}")
        if read["status"] == "EXECUTED":
            break
    assert read["status"] == "EXECUTED"
    assert not await card_merchant.stack.pool.fetchval(
        "SELECT awaits_provider FROM refunds WHERE refund_id = $1", refused["refund_id"])
