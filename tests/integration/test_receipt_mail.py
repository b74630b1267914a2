"""Receipts mailed to the buyer over SMTP (an aiosmtpd server in-process): after payment.settled and again after
payment.refund.executed, to the API's customer_email or an address given on the checkout page."""

from __future__ import annotations

import asyncio
import email.message
import secrets

import msgspec
import pytest

from accounts.receipt_keys import receipt_url
from common.mail import Mailer
from common.secrets import derived_keys
from notify.receipt_mailer import ReceiptMailer
from tests.integration.helpers import QUICK, pay, quick

USDT = "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"

# The session's stack is shared, and the mailer reads every event of its stream: each buyer's address is this
# run's own, so no other test's order mails them.
ANA, BEN, CY, DEE = (f"{name}.{secrets.token_hex(3)}@example.com" for name in ("ana", "ben", "cy", "dee"))


@pytest.fixture
async def mailer(stack, redis, keys, smtp):
    controller, inbox = smtp
    settings = msgspec.structs.replace(stack.settings, smtp_url=f"smtp://127.0.0.1:{controller.port}",
                                       mail_from="receipts@shop.example")
    derived = await derived_keys(stack.pool, stack.vault)
    receipts = ReceiptMailer(stack.pool, redis, keys, Mailer.configured(settings), consumer="test")
    await receipts.start()
    return receipts, inbox, derived.receipts


async def delivered(receipts: ReceiptMailer, inbox, to: str, count: int) -> list[email.message.Message]:
    """The messages to `to` once `count` have arrived, running the mailer as its process would."""
    for _ in range(100):
        await receipts.consume()
        await receipts.send_due()
        mine = [m for m in inbox.messages if m["To"] == to]
        if len(mine) >= count:
            return mine
        await asyncio.sleep(0.05)
    raise AssertionError(f"{len(mine)} of {count} mails to {to} arrived")


def _text(message: email.message.Message) -> str:
    return next(p.get_payload(decode=True).decode() for p in message.walk() if p.get_content_type() == "text/plain")


def _html(message: email.message.Message) -> str:
    return next(p.get_payload(decode=True).decode() for p in message.walk() if p.get_content_type() == "text/html")


async def test_the_receipt_is_mailed_when_paid_and_again_when_a_refund_is_executed(stack, merchant, mailer):
    receipts, inbox, key = mailer
    status, created = await merchant.post(QUICK, {"amount": "10.00", "customer_email": ANA})
    assert status == 201, created
    assert created["order"]["customer_email"] == ANA
    assert (await pay(merchant, created["order_id"], "10.00"))[0] == 201
    [paid] = await delivered(receipts, inbox, ANA, 1)
    url = receipt_url(stack.settings, key, created["order_id"])
    assert paid["From"] == "receipts@shop.example" and "Acme" in paid["Subject"]
    assert "You paid 10.00 USD to Acme" in _text(paid) and url in _text(paid) and f'href="{url}"' in _html(paid)

    status, refund = await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/refunds", {
        "order_id": created["order_id"], "amount": "2.50", "reason": "late",
        "refund_to_address": "0x1111111111111111111111111111111111111111", "refund_network": "sepolia",
        "refund_token_address": USDT})
    assert status == 201, refund
    assert (await merchant.post(f"/b2b/v1/test-helpers/refunds/{refund['refund_id']}/execute", {}))[0] == 200
    [_, refunded] = await delivered(receipts, inbox, ANA, 2)
    assert refunded["Subject"].startswith("Refund from Acme") and "refunded 2.50 USD" in _text(refunded)
    await asyncio.sleep(0.1)
    await receipts.consume()
    await receipts.send_due()
    assert len([m for m in inbox.messages if m["To"] == ANA]) == 2  # each mail once


async def test_an_order_without_an_address_mails_nothing(stack, merchant, mailer):
    receipts, inbox, _ = mailer
    created = await quick(merchant)
    assert (await pay(merchant, created["order_id"], "10.00"))[0] == 201
    for _ in range(5):
        await receipts.consume()
        await receipts.send_due()
    assert await stack.pool.fetchval("SELECT count(*) FROM receipt_mails WHERE order_id = $1",
                                     created["order_id"]) == 0


@pytest.mark.parametrize("bad", ["not-an-email", "a@b", "<script>@x.io", "x" * 250 + "@example.com"])
async def test_a_bad_address_is_refused_and_a_bad_api_address_too(stack, merchant, bad):
    created = await quick(merchant)
    async with stack.http.post(f"{stack.base_url}/c/{created['session_key']}/receipt-email",
                               data={"customer_email": bad}, allow_redirects=False) as resp:
        assert resp.status == 422 and (await resp.json())["error"]["param"] == "customer_email"
    assert await stack.pool.fetchval("SELECT count(*) FROM receipt_emails WHERE order_id = $1",
                                     created["order_id"]) == 0
    status, answer = await merchant.post(QUICK, {"amount": "1.00", "customer_email": bad})
    assert status == 422 and answer["error"]["param"] == "customer_email"


async def test_an_address_given_on_the_checkout_page_gets_the_receipt_and_is_never_shown(stack, merchant, mailer):
    receipts, inbox, _ = mailer
    created = await quick(merchant)
    page = f"{stack.base_url}/c/{created['session_key']}"
    async with stack.http.post(f"{page}/receipt-email", data={"customer_email": BEN},
                               allow_redirects=False) as resp:
        assert resp.status == 303 and resp.headers["Location"].endswith("?emailed=1")
    async with stack.http.get(page + "?emailed=1") as resp:
        text = await resp.text()
        assert BEN not in text and 'data-testid="receipt-email-given"' in text
    async with stack.http.get(page + "/status") as resp:
        assert BEN not in await resp.text()
    assert (await pay(merchant, created["order_id"], "10.00"))[0] == 201
    [mail] = await delivered(receipts, inbox, BEN, 1)
    assert "10.00 USD" in _text(mail)


async def test_an_address_given_after_paying_gets_the_receipt_at_once(stack, merchant, mailer):
    receipts, inbox, _ = mailer
    created = await quick(merchant)
    assert (await pay(merchant, created["order_id"], "10.00"))[0] == 201
    await receipts.consume()  # the settled event passes with no address known
    async with stack.http.post(f"{stack.base_url}/c/{created['session_key']}/receipt-email",
                               json={"customer_email": CY}) as resp:
        assert resp.status == 201
    [mail] = await delivered(receipts, inbox, CY, 1)
    assert "You paid 10.00 USD" in _text(mail)


async def test_a_failed_send_is_kept_and_retried_later(stack, merchant, mailer):
    receipts, _inbox, key = mailer
    broken = ReceiptMailer(stack.pool, receipts.redis, receipts.keys, Mailer("smtp://127.0.0.1:9", "r@shop.example"),
                           consumer="test")
    status, created = await merchant.post(QUICK, {"amount": "3.00", "customer_email": DEE})
    assert (await pay(merchant, created["order_id"], "3.00"))[0] == 201
    for _ in range(50):
        await broken.consume()
        await broken.send_due()
        row = await stack.pool.fetchrow("SELECT attempts, due_at, sent_at, last_error FROM receipt_mails"
                                        " WHERE order_id = $1", created["order_id"])
        if row and row["attempts"]:
            break
        await asyncio.sleep(0.05)
    assert row["attempts"] == 1 and row["sent_at"] is None and row["due_at"] > stack.clock()
    assert DEE in row["last_error"]
