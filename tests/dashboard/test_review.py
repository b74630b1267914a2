"""Review queues: pending refunds approved and rejected, a token canceled with a note, a renewal approved."""

from __future__ import annotations

import json
import re
from datetime import datetime

from playwright.async_api import expect

from tests.dashboard.support import last_part, sign_in
from tests.integration.test_refund_requests_api import Buyer
from tests.integration.test_refunds_api import customer_refund, paid_order


async def mint(client, order_id: str, **extra) -> str:
    status, body = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refund-requests",
                                     {"ref_type": "order_id", "ref_value": order_id, "amount": "5.00", **extra})
    assert status == 201, body
    return body["token"]


async def event_data(stack, order_id: str, kind: str) -> dict:
    raw = await stack.pool.fetchval("SELECT data FROM events WHERE order_id = $1 AND type = $2 ORDER BY seq DESC"
                                    " LIMIT 1", order_id, kind)
    return json.loads(raw)


async def test_pending_refunds_are_approved_and_rejected_with_a_reason(page, staff, stack):
    order_id = await paid_order(staff.client, "10.00")
    kept = (await customer_refund(staff.client, order_id, "4.00"))[1]["refund_id"]
    refused = (await customer_refund(staff.client, order_id, "3.00"))[1]["refund_id"]
    await sign_in(page, staff)
    await page.goto(staff.url("/review"))
    await expect(page.get_by_test_id("pending-refunds").locator("li")).to_have_count(2)

    await page.locator(f"[data-refund-id='{kept}']").get_by_role("button", name="Approve").click()
    await expect(page.get_by_test_id("flash")).to_have_text(f"Refund {kept} approved.")
    rejected = page.locator(f"[data-refund-id='{refused}']")
    await rejected.get_by_label("Reason for rejecting").fill("outside the return window")
    await rejected.get_by_role("button", name="Reject").click()
    await expect(page.get_by_test_id("flash")).to_have_text(f"Refund {refused} rejected.")
    assert page.url.endswith("/dashboard/test/review")
    assert await page.get_by_test_id("pending-refunds").count() == 0

    assert (await staff.client.get(f"/b2b/v1/refunds/{kept}"))[1]["status"] == "APPROVED"
    body = (await staff.client.get(f"/b2b/v1/refunds/{refused}"))[1]
    assert (body["status"], body["rejection_reason"]) == ("REJECTED", "outside the return window")
    assert (await event_data(stack, order_id, "payment.refund.rejected"))["reason"] == "outside the return window"


async def test_an_active_token_is_canceled_with_a_note_that_becomes_data_reason(page, staff, stack):
    order_id = await paid_order(staff.client, "10.00")
    token = await mint(staff.client, order_id)
    await sign_in(page, staff)
    await page.goto(staff.url("/review"))
    item = page.get_by_test_id("tokens").locator(f"[data-token='{token}']")
    await item.get_by_label("Note (optional, sent in the event)").fill("customer phoned instead")
    await item.get_by_role("button", name="Cancel link").click()
    await expect(page.get_by_test_id("flash")).to_contain_text("canceled")
    await expect(page.get_by_test_id("tokens").locator(f"[data-token='{token}']")).to_contain_text("CANCELED")

    body = (await staff.client.get(f"/b2b/v1/refund-requests/{token}"))[1]
    assert (body["status"], body["cancel_reason"]) == ("CANCELED", "customer phoned instead")
    assert (await event_data(stack, order_id, "refund_request.canceled"))["reason"] == "customer phoned instead"


async def test_a_renewal_request_shows_the_customer_note_and_approving_it_shows_the_new_link(page, staff, stack):
    order_id = await paid_order(staff.client, "10.00")
    token = await mint(staff.client, order_id, ttl_seconds=1)
    stack.clock.advance(1.1)
    status, _ = await Buyer(stack).renew(token, "I was travelling")
    assert status == 200
    await sign_in(page, staff)
    await page.goto(staff.url("/review"))
    item = page.get_by_test_id("renewals").locator(f"[data-token='{token}']")
    await expect(item.get_by_test_id("customer-note")).to_have_text("The customer wrote: “I was travelling”")
    await item.get_by_role("button", name="Approve and get the new link").click()
    await page.wait_for_url(re.compile(r".*/dashboard/test/refund-requests/rfqt_[A-Za-z0-9_-]+$"))

    new = last_part(page.url)
    assert new != token
    old_body = (await staff.client.get(f"/b2b/v1/refund-requests/{token}"))[1]
    new_body = (await staff.client.get(f"/b2b/v1/refund-requests/{new}"))[1]
    assert (old_body["status"], old_body["replaced_by"]) == ("RENEWED", new)
    assert (new_body["status"], new_body["source"], new_body["amount"]) == ("ACTIVE", "renewal", "5.00")
    lifetime = datetime.fromisoformat(new_body["expires_at"].replace("Z", "+00:00")) - stack.clock()
    assert lifetime.total_seconds() > 86000  # renewed from the dashboard: the dashboard's 24 hours
    await expect(page.get_by_test_id("refund-url")).to_have_value(new_body["refund_url"])
