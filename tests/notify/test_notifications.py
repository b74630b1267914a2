"""Staff notifications end to end: a buyer's refund request reaches the owner's mailbox (a real SMTP server,
in-process) and the bell; a cashier hears nothing of refunds; a buyer's note stays text; mails that cannot be sent
are retried and counted; each user's choices hold."""

from __future__ import annotations

import asyncio
import email
from datetime import timedelta

from playwright.async_api import expect
from prometheus_client import REGISTRY

from notify.notifier import Notifier
from streams.consumer import Entry
from tests.dashboard.support import Http, sign_in
from tests.integration.test_refund_requests_api import Buyer, minted
from tests.integration.test_refunds_api import paid_order
from tests.notify.conftest import mailer_to
from tests.support.ports import free_port
from web.edge.dashboard_site import dashboard_url

NOTE = '<script>alert("x")</script> =HYPERLINK("http://x","y")'


async def drain(notifier: Notifier, until, timeout: float = 5.0) -> None:
    """Read the events stream until `until()` holds (the actors publish a moment after they commit)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await until():
        assert asyncio.get_running_loop().time() < deadline, "no notification came"
        await notifier.consume(block_ms=100)


async def count(stack, user_email: str, kind: str | None = None) -> int:
    return await stack.pool.fetchval(
        "SELECT count(*) FROM notifications n JOIN staff_users u USING (user_id) WHERE u.email = $1"
        " AND ($2::text IS NULL OR n.kind = $2)", user_email, kind)


def parts(message: email.message.Message) -> dict[str, str]:
    return {p.get_content_type(): p.get_payload(decode=True).decode() for p in message.walk() if not p.is_multipart()}


async def request_refund(stack, client, note: str = NOTE) -> dict:
    order_id = await paid_order(client, "8.00")
    token = await minted(client, order_id, "8.00")
    status, refund = await Buyer(stack).submit(token["token"], "8.00", note=note)
    assert status == 201, refund
    return (await client.get(f"/b2b/v1/orders/{order_id}"))[1]


async def test_a_refund_request_reaches_the_owner_by_mail_and_the_cashier_hears_nothing(stack, team, notifier, smtp):
    owner, manager, cashier = team
    inbox = smtp[1]
    # The session's database is shared: what other tests' notifications left due goes out first, and away.
    await notifier.send_mails()
    inbox.messages.clear()
    order = await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, owner.email, "refund_requested"))
    assert await notifier.send_mails() == 4  # the payment and the request, each to the owner and the manager

    assert {m["To"] for m in inbox.messages} == {owner.email, manager.email}  # the cashier receives nothing
    by_recipient = {m["To"]: m for m in inbox.messages if m["Subject"].startswith("Refund request")}
    assert set(by_recipient) == {owner.email, manager.email}
    mail = by_recipient[owner.email]
    assert f"#{order['order_number']}" in mail["Subject"]
    text = parts(mail)
    assert set(text) == {"text/plain"}  # no HTML part: a buyer's note cannot run anywhere
    body = text["text/plain"]
    assert f"order #{order['order_number']}" in body and "8.00 USD" in body
    assert f"{dashboard_url(stack.settings)}/test/review" in body
    assert NOTE in body  # shown as the buyer wrote it, as text
    assert await count(stack, cashier.email) == 0


async def test_the_bell_counts_lists_and_marks_read_with_the_note_as_text(stack, team, notifier):
    owner, _, cashier = team
    order = await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, owner.email, "refund_requested"))
    http = Http(owner.dashboard)
    try:
        await http.sign_in(owner)
        _, page = await http.get("/test/orders")
        assert 'data-testid="unread">2<' in page  # the order's payment, then the buyer's request
        _, page = await http.get("/test/notifications")
        assert f"Refund request for order #{order['order_number']} waits for review" in page
        assert "&lt;script&gt;alert(" in page and "<script>alert" not in page  # escaped: the script is text
        csrf = await http.csrf("/test/notifications")
        status, _, location = await http.post("/test/notifications/read", {"csrf": csrf})
        assert status == 303
        _, page = await http.get("/test/orders")
        assert 'data-testid="unread"' not in page
        status, listed = await http.get("/app/notifications")
        assert status == 200 and '"unread": 0' in listed
    finally:
        await http.close()
    http = Http(cashier.dashboard)
    try:
        await http.sign_in(cashier)
        status, listed = await http.get("/app/notifications")
        assert status == 200 and '"data": []' in listed
    finally:
        await http.close()


async def test_a_second_delivery_of_the_same_events_adds_nothing(stack, team, notifier, redis, keys):
    owner, _, _ = team
    before = await redis.xrevrange(keys.events, count=1)
    await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, owner.email, "refund_requested"))
    # This test's own entries, read a second time (other tests' older entries were never read by a notifier: with
    # payments told by default they would make notices of their own).
    entries = await redis.xrange(keys.events, min=b"(" + before[0][0] if before else "-")
    assert entries and await notifier._ingest([Entry(keys.events, *entry) for entry in entries]) == 0
    assert await count(stack, owner.email) == 2  # the payment and the request, once each


def _mails(outcome: str) -> float:
    return REGISTRY.get_sample_value("notification_mails_total", {"outcome": outcome}) or 0.0


async def test_a_mail_that_cannot_be_sent_is_retried_counted_and_then_sent(stack, team, notifier, smtp):
    owner, _, _ = team
    working = notifier.mailer
    notifier.mailer = mailer_to(free_port())  # nothing listens there
    await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, owner.email))
    retrying = _mails("retrying")
    assert await notifier.send_mails() == 0
    assert _mails("retrying") >= retrying + 1
    row = await stack.pool.fetchrow(
        "SELECT mail_status, mail_attempts, mail_due_at, mail_error FROM notifications n JOIN staff_users u"
        " USING (user_id) WHERE u.email = $1", owner.email)
    assert (row["mail_status"], row["mail_attempts"]) == ("pending", 1) and row["mail_error"]
    notifier.mailer = working
    assert await notifier.send_mails() == 0  # not due yet: it waits for its retry
    stack.clock.advance(120)
    sent = _mails("sent")
    assert await notifier.send_mails() >= 1
    assert _mails("sent") >= sent + 1
    assert owner.email in {m["To"] for m in smtp[1].messages}


async def test_each_user_chooses_per_kind(stack, team, notifier):
    owner, manager, cashier = team
    http = Http(owner.dashboard)
    try:
        await http.sign_in(owner)
        csrf = await http.csrf("/test/notifications")
        status, _, _ = await http.post("/test/notifications/choices", {"csrf": csrf, "payment_received": "on"})
        assert status == 303
    finally:
        await http.close()
    http = Http(cashier.dashboard)
    try:
        await http.sign_in(cashier)
        csrf = await http.csrf("/test/notifications")
        await http.post("/test/notifications/choices", {"csrf": csrf, "refund_requested": "on"})  # not offered
    finally:
        await http.close()
    await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, manager.email))
    await drain(notifier, lambda: count(stack, owner.email, "payment_received"))
    assert await count(stack, owner.email, "refund_requested") == 0  # the owner turned it off by saving without it
    assert await count(stack, cashier.email) == 0


async def test_a_webhook_endpoint_failing_for_over_an_hour_is_told_once(stack, team, notifier):
    owner, manager, _ = team
    status, endpoint = await owner.client.post(f"/b2b/v1/merchants/{owner.merchant_id}/webhook-endpoints",
                                               {"url": "https://hooks.example.com/in"})
    assert status == 201, endpoint
    await stack.pool.execute("UPDATE webhook_endpoints SET failing_since = $2 WHERE endpoint_id = $1",
                             endpoint["id"], stack.clock() - timedelta(minutes=59))
    await notifier.sweep_failing_endpoints()
    assert await count(stack, owner.email) == 0  # 59 minutes: not yet
    stack.clock.advance(120)
    await notifier.sweep_failing_endpoints()
    await notifier.sweep_failing_endpoints()
    assert await count(stack, owner.email, "webhook_failing") == 1
    assert await count(stack, manager.email) == 0  # managers do not configure webhooks


async def test_the_apps_bell_shows_the_unread_count_and_opens_the_list(stack, team, notifier, phone):
    owner, _, _ = team
    order = await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, owner.email, "refund_requested"))
    page = await phone.new_page()
    await sign_in(page, owner)
    await page.goto(f"{owner.dashboard}/app")
    await expect(page.get_by_test_id("unread")).to_have_text("2")  # the order's payment, then the buyer's request
    await page.get_by_test_id("bell").click()
    await expect(page.get_by_test_id("notifications")).to_contain_text(f"order #{order['order_number']}")
    await page.get_by_test_id("open").first.click()  # the newest: the request
    await expect(page).to_have_url(f"{owner.dashboard}/test/review")
    await page.goto(f"{owner.dashboard}/app")
    await expect(page.get_by_test_id("bell")).to_be_visible()
    await expect(page.get_by_test_id("unread")).to_have_text("1")  # the request was read; the payment's is left
