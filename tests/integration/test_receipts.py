"""Receipts: `{checkout origin}/receipts/{receipt_key}` for every paid order, its address in the order API and in
payment.settled / payment.refund.executed, and links to it from the checkout status and the refund status page."""

from __future__ import annotations

import re

from accounts.receipt_keys import receipt_url
from common.secrets import derived_keys
from tests.integration.helpers import QUICK, order, pay, quick, until

NETWORK_TX = "0x" + "ab" * 32


def local(stack, url: str) -> str:
    return url.replace(stack.settings.checkout_base(), stack.base_url)


async def _html(stack, url: str) -> tuple[int, str, dict]:
    async with stack.http.get(local(stack, url)) as resp:
        return resp.status, await resp.text(), dict(resp.headers)


async def _events(merchant, order_id: str) -> dict[str, dict]:
    status, listing = await merchant.get(f"/b2b/v1/events?order_id={order_id}&limit=100")
    assert status == 200, listing
    return {e["type"]: e["data"] for e in listing["data"]}


async def test_a_paid_order_has_a_receipt_with_what_the_buyer_paid(stack, merchant):
    status, created = await merchant.post(QUICK, {
        "line_items": [{"name": "Tea <b>strong</b>", "unit_amount": "5.00", "quantity": 2}],
        "external_ref": "ERP-SECRET-REF", "metadata": {"internal": "do-not-show"}})
    assert status == 201, created
    assert created["order"]["receipt_url"] is None  # not paid yet
    status, paid = await pay(merchant, created["order_id"], "10.00", tx_hash=NETWORK_TX)
    assert status == 201, paid
    url = paid["receipt_url"]
    assert re.fullmatch(re.escape(stack.settings.checkout_base()) + r"/receipts/rcpt_[0-9a-f]{32}_ord_\w+", url)
    assert (await order(merchant, created["order_id"]))["receipt_url"] == url

    status, html, headers = await _html(stack, url)
    assert status == 200
    assert '<meta name="robots" content="noindex">' in html and headers["X-Robots-Tag"].startswith("noindex")
    assert "Acme" in html and f"Order #{created['order_number']}" in html
    assert "10.00 USD" in html and NETWORK_TX in html
    assert f"https://sepolia.etherscan.io/tx/{NETWORK_TX}" in html
    assert "Tea &lt;b&gt;strong&lt;/b&gt;" in html and "<b>strong" not in html
    # Nothing of the merchant's own records, nor the order's id.
    assert "ERP-SECRET-REF" not in html and "do-not-show" not in html and created["order_id"] not in html


async def test_payment_settled_carries_the_receipt_url(stack, merchant):
    created = await quick(merchant)
    status, paid = await pay(merchant, created["order_id"], "10.00")
    assert status == 201
    events = await _events(merchant, created["order_id"])
    assert events["payment.settled"]["receipt_url"] == paid["receipt_url"]
    assert events["order.created"]["payment_link_id"] is None


async def test_an_executed_refund_shows_on_the_receipt_and_its_event_carries_the_url(stack, merchant):
    created = await quick(merchant)
    assert (await pay(merchant, created["order_id"], "10.00"))[0] == 201
    status, refund = await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refunds", {
        "order_id": created["order_id"], "amount": "4.00", "reason": "broken cup",
        "refund_to_address": "0x1111111111111111111111111111111111111111", "refund_network": "sepolia",
        "refund_token_address": "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"})
    assert status == 201, refund
    status, _ = await merchant.post(f"/b2b/v1/test-helpers/refunds/{refund['refund_id']}/execute", {})
    assert status == 200
    body = await until(merchant, created["order_id"], lambda o: o["status"] == "PARTIALLY_REFUNDED")
    events = await _events(merchant, created["order_id"])
    assert events["payment.refund.executed"]["receipt_url"] == body["receipt_url"]
    status, html, _ = await _html(stack, body["receipt_url"])
    assert status == 200 and "4.00 USD" in html and "Refund sent" in html and "broken cup" not in html
    # The test helper made both transactions up: the receipt shows their hashes but links neither to an explorer,
    # where they would open "transaction not found".
    assert "etherscan.io" not in html and 'data-testid="receipt-explorer"' not in html
    assert re.search(r"test_\w+", html)

    # The buyer's refund status page links to the receipt.
    status, page, _ = await _html(stack, refund["status_url"])
    assert status == 200 and 'data-testid="refund-receipt-link"' in page
    assert body["receipt_url"].removeprefix(stack.settings.checkout_base()) in page


async def test_an_unpaid_order_or_a_forged_key_shows_no_receipt(stack, merchant):
    created = await quick(merchant)
    keys = await derived_keys(stack.pool, stack.vault)
    status, html, _ = await _html(stack, receipt_url(stack.settings, keys.receipts, created["order_id"]))
    assert status == 404 and "has not been paid" in html and "10.00 USD" not in html
    paid_one = await quick(merchant)
    status, paid = await pay(merchant, paid_one["order_id"], "10.00")
    url = paid["receipt_url"]
    # Another order's id under this one's MAC, a MAC of zeros, a key of no shape: no such receipt.
    for wrong in (url.replace(paid_one["order_id"], created["order_id"]),
                  re.sub(r"rcpt_[0-9a-f]{32}", "rcpt_" + "0" * 32, url), f"{stack.base_url}/receipts/nothing"):
        status, html, _ = await _html(stack, wrong)
        assert status == 404 and "Acme" not in html


async def test_the_checkout_status_links_to_the_receipt_once_paid(stack, merchant):
    created = await quick(merchant)
    async with stack.http.get(f"{stack.base_url}/c/{created['session_key']}/status") as resp:
        assert (await resp.json())["receipt_url"] is None
    status, paid = await pay(merchant, created["order_id"], "10.00")
    async with stack.http.get(f"{stack.base_url}/c/{created['session_key']}/status") as resp:
        assert (await resp.json())["receipt_url"] == paid["receipt_url"].removeprefix(stack.settings.checkout_base())
