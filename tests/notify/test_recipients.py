"""Who is told: current members only, once per address; a removed member's unread notifications and unsent mails
go with the removal; "waits for review" only for a refund that does."""

from __future__ import annotations

import pytest

from accounts import invitations, users
from notify import kinds
from tests.dashboard.support import PASSWORD
from tests.integration.test_refunds_api import merchant_refund, paid_order, set_auto_approve
from tests.notify.test_notifications import count, drain, request_refund


async def _remove(stack, client, email: str) -> str:
    user_id = (await users.find(stack.pool, email)).user_id
    live = await stack.other_mode(client, livemode=True)
    status, body = await live.call("DELETE", f"/b2b/v1/merchants/{client.merchant_id}/staff/{user_id}")
    assert status == 200, body
    return user_id


async def _fresh_inbox(notifier, smtp) -> list:
    await notifier.send_mails()  # what other tests of the shared database left due goes out first, and away
    smtp[1].messages.clear()
    return smtp[1].messages


async def test_a_removed_member_is_neither_notified_nor_mailed(stack, team, notifier, smtp):
    owner, manager, _ = team
    inbox = await _fresh_inbox(notifier, smtp)
    await _remove(stack, owner.client, manager.email)
    await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, owner.email, "refund_requested"))
    assert await count(stack, manager.email) == 0
    assert await notifier.send_mails() == 2  # the order's payment and the buyer's request
    assert [m["To"] for m in inbox] == [owner.email] * 2


async def test_removal_drops_the_members_unread_notifications_and_unsent_mails(stack, team, notifier, smtp):
    owner, manager, _ = team
    inbox = await _fresh_inbox(notifier, smtp)
    await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, manager.email, "refund_requested"))
    manager_id = await _remove(stack, owner.client, manager.email)
    assert await stack.pool.fetchval("SELECT count(*) FROM notifications WHERE user_id = $1", manager_id) == 0
    assert await notifier.send_mails() == 2  # the order's payment and the buyer's request
    assert [m["To"] for m in inbox] == [owner.email] * 2


async def test_an_address_invited_again_after_removal_is_mailed_once(stack, team, notifier, smtp):
    owner, manager, _ = team
    await _remove(stack, owner.client, manager.email)
    async with stack.pool.acquire() as conn:
        _, token = await invitations.create(conn, owner.merchant_id, manager.email, "manager", "test", stack.clock())
        await invitations.accept(conn, token, PASSWORD, stack.clock())
    inbox = await _fresh_inbox(notifier, smtp)
    await request_refund(stack, owner.client)
    await drain(notifier, lambda: count(stack, owner.email, "refund_requested"))
    await notifier.send_mails()
    # Once each, of the order's payment and of the buyer's request.
    assert sorted(m["To"] for m in inbox) == sorted([owner.email, manager.email] * 2)


async def test_a_refund_approved_at_once_tells_nobody_it_waits_for_review(stack, team, notifier):
    owner, manager, _ = team
    order_id = await paid_order(owner.client)
    assert (await merchant_refund(owner.client, order_id, "1.00"))[0] == 201  # the merchant's own: approved
    await set_auto_approve(stack, owner.client, True)
    try:
        await request_refund(stack, owner.client)  # a buyer's, approved by the standing choice
    finally:
        await set_auto_approve(stack, owner.client, False)
    await request_refund(stack, owner.client)  # a buyer's that waits: the stream is read past the two before it
    await drain(notifier, lambda: count(stack, manager.email))
    assert await count(stack, owner.email, "refund_requested") == 1
    assert await count(stack, manager.email, "refund_requested") == 1


@pytest.mark.parametrize(("source", "status", "told"), [
    ("customer", "PENDING", True),
    ("merchant", "PENDING", False),  # the merchant's own refund: approved by the next event of its transition
    ("customer", "APPROVED", False),
])
def test_only_a_buyers_pending_refund_makes_a_review_notice(source, status, told):
    data = {"order_id": "ord_1", "order_number": "7", "amount": "1.00", "refund_id": "re_1", "refund_status": status,
            "source": source, "reason": "damaged"}
    notice = kinds.from_event("evt_1", "payment.refund.requested", "mer_1", False, data)
    assert (notice is not None) is told
    if told:
        assert "waits for review" in notice.title and notice.pending_refund_id == "re_1"
