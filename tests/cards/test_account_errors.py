"""The provider refusing the merchant's card account itself (here localstripe refusing a key, as Stripe answers a
revoked one: 401) is the account's error: recorded on it, told once per episode to its owners (bell and mail,
never a cashier), answered to the buyer as no card payments rather than a declined card; it ends when the account
works again or is connected again."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from cards.provider import AccountRefused, ProviderRefused
from notify.notifier import Notifier
from tests.cards.test_refunds import faulty, refund
from tests.dashboard.support import Http, make_staff
from tests.notify.conftest import mailer_to
from tests.notify.test_notifications import count, parts
from web.dashboard.site import dashboard_url

ACCOUNT_ERROR = "card_account_error"


@pytest.fixture
async def notifier(card_stack, redis, keys, smtp):
    return Notifier(card_stack.pool, redis, keys, mailer_to(smtp[0].port), dashboard_url(card_stack.settings),
                    clock=card_stack.clock, group=f"notifications-{asyncio.get_running_loop().time()}")


async def connect(card_merchant, secret_key: str) -> None:
    status, body = await card_merchant.client.patch(f"/b2b/v1/merchants/{card_merchant.merchant_id}/settings", {
        "card": {"provider": "stripe", "secret_key": secret_key, "publishable_key": f"pk_test_{secrets.token_hex(12)}",
                 "webhook_secret": card_merchant.webhook_secret}})
    assert status == 200, body


async def account_error(card_merchant) -> str | None:
    return await card_merchant.stack.pool.fetchval(
        "SELECT last_error FROM card_accounts WHERE merchant_id = $1 AND NOT livemode", card_merchant.merchant_id)


async def test_a_refused_key_is_told_once_to_the_owner_by_mail_and_never_to_a_cashier(card_merchant, sender,
                                                                                      notifier, smtp):
    owner = await make_staff(card_merchant.stack, card_merchant.client)
    cashier = await make_staff(card_merchant.stack, card_merchant.client, role="cashier")
    paid = await card_merchant.paid_order()
    # A restricted key (rk_) is a well-formed key that localstripe does not accept: it answers 401 as Stripe answers
    # a revoked or wrong key.
    await connect(card_merchant, f"rk_test_{secrets.token_hex(12)}")
    status, created = await refund(card_merchant, paid["order_id"], "3.00")
    assert status == 201, created
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert read["status"] == "APPROVED"
    [failed] = read["transactions"]
    assert failed["status"] == "failed" and "refused the merchant's account" in failed["reason"]
    assert await account_error(card_merchant)

    # The buyer of another checkout is told the shop takes no cards now, not that their card was declined.
    session = await card_merchant.session()
    status, body = await card_merchant.pay_by_card(session["session_key"])
    assert status == 503 and body["error"]["code"] == "card_account_unavailable", body

    await notifier.sweep_card_account_errors()
    await card_merchant.client.post(f"/b2b/v1/refunds/{created['refund_id']}/retry", {})
    await sender.run_once()  # refused again: the same episode
    await notifier.sweep_card_account_errors()
    assert await count(card_merchant.stack, owner.email, ACCOUNT_ERROR) == 1
    assert await count(card_merchant.stack, cashier.email) == 0
    await notifier.send_mails()
    [mail] = [m for m in smtp[1].messages if m["To"] == owner.email]
    assert "card account" in mail["Subject"]
    body = parts(mail)["text/plain"]
    assert "Card payments and card refunds fail" in body
    assert f"{dashboard_url(card_merchant.stack.settings)}/test/settings" in body
    assert not [m for m in smtp[1].messages if m["To"] == cashier.email]

    http = Http(owner.dashboard)
    try:
        await http.sign_in(owner)
        _, page = await http.get("/test/settings")
        assert "The card provider refuses this account" in page
    finally:
        await http.close()

    # Connected again with a key the provider accepts: the episode is over and the refund goes through on a retry.
    await connect(card_merchant, f"sk_test_{secrets.token_hex(12)}")
    assert await account_error(card_merchant) is None
    status, _ = await card_merchant.client.post(f"/b2b/v1/refunds/{created['refund_id']}/retry", {})
    assert status == 200
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert read["status"] == "EXECUTED", read


async def test_the_error_ends_when_the_account_works_again_and_a_new_one_is_told_again(card_merchant, sender,
                                                                                      notifier):
    owner = await make_staff(card_merchant.stack, card_merchant.client)
    paid = await card_merchant.paid_order()
    status, first = await refund(card_merchant, paid["order_id"], "1.00")
    faulty(sender, AccountRefused("This account is restricted."), first["refund_id"])
    await sender.run_once()
    assert await account_error(card_merchant) == "This account is restricted."
    await notifier.sweep_card_account_errors()
    await card_merchant.client.post(f"/b2b/v1/refunds/{first['refund_id']}/retry", {})
    await sender.run_once()  # the provider takes this one: the account works
    assert await account_error(card_merchant) is None
    status, second = await refund(card_merchant, paid["order_id"], "1.00")
    faulty(sender, AccountRefused("This account is restricted."), second["refund_id"])
    await sender.run_once()
    await notifier.sweep_card_account_errors()
    assert await count(card_merchant.stack, owner.email, ACCOUNT_ERROR) == 2  # a second episode


async def test_a_refund_the_provider_refuses_for_itself_is_no_account_error(card_merchant, sender, notifier):
    owner = await make_staff(card_merchant.stack, card_merchant.client)
    paid = await card_merchant.paid_order()
    status, created = await refund(card_merchant, paid["order_id"], "2.00")
    faulty(sender, ProviderRefused("Insufficient funds in Stripe account."), created["refund_id"])
    await sender.run_once()
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{created['refund_id']}")
    assert "Insufficient funds" in read["transactions"][0]["reason"]
    assert await account_error(card_merchant) is None
    await notifier.sweep_card_account_errors()
    assert await count(card_merchant.stack, owner.email, ACCOUNT_ERROR) == 0
