"""The settings page's webhook section, owners only: add an endpoint (URL, events) and see its secret once,
send it a test event whose delivery shows in the log, roll its secret, disable it and delete it."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json

from playwright.async_api import expect

from tests.dashboard.support import SCREENSHOTS, sign_in
from tests.dashboard.test_roles import _session_csrf
from tests.webhooks.conftest import dispatcher, receiver  # noqa: F401


async def _endpoints(staff) -> list[dict]:
    status, listing = await staff.client.get(f"/b2b/v1/merchants/{staff.merchant_id}/webhook-endpoints")
    assert status == 200
    return listing["data"]


async def _received(hook, n: int = 1) -> None:
    for _ in range(100):
        if len(hook.requests) >= n:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{n} deliveries expected, {len(hook.requests)} arrived")


def _signed_by(secret: str, request) -> bool:
    headers = request.headers  # lower-cased names
    mac = hmac.new(secret.encode(), headers["x-service-timestamp"].encode() + b"." + request.body, hashlib.sha256)
    return "sha256=" + mac.hexdigest() in [s.strip() for s in headers["x-service-signature"].split(",")]


async def test_an_owner_adds_tests_rolls_disables_and_deletes_an_endpoint(
        page, staff, receiver, dispatcher):  # noqa: F811
    hook, sender = await receiver(), await dispatcher()
    await sign_in(page, staff)
    await page.goto(staff.url("/settings"))
    add = page.get_by_test_id("add-webhook")
    await add.get_by_label("URL").fill(hook.url)
    await add.get_by_label("Events (comma-separated; * for all)").fill("payment.settled, order.canceled")
    await add.get_by_label("Description (optional)").fill('<script>alert("x")</script> backend')
    await add.get_by_role("button", name="Add endpoint").click()
    secret = await page.get_by_test_id("webhook-secret").input_value()
    assert secret.startswith("whsec_")
    [endpoint] = await _endpoints(staff)
    assert (endpoint["url"], endpoint["enabled_events"]) == (hook.url, ["payment.settled", "order.canceled"])
    await expect(page.get_by_test_id("webhooks")).to_contain_text('<script>alert("x")</script> backend')
    await page.goto(staff.url("/settings"))
    assert await page.get_by_test_id("webhook-secret").count() == 0  # shown once

    webhooks = page.get_by_test_id("webhooks")
    await webhooks.get_by_role("button", name=f"Send a test event to {hook.url}").click()
    await expect(page.get_by_test_id("flash")).to_contain_text("Test event evt_")
    await sender.sweep()
    await _received(hook)
    event = json.loads(hook.requests[0].body)
    assert event["type"] == "webhook_endpoint.test" and event["data"]["endpoint_id"] == endpoint["id"]
    assert _signed_by(secret, hook.requests[0])
    for _ in range(100):  # the attempt is written in the dispatcher's next batch
        await page.goto(staff.url("/settings"))
        if "succeeded" in await page.get_by_test_id("webhooks").text_content():
            break
        await asyncio.sleep(0.05)
    log = page.get_by_test_id("webhooks").locator("tbody tr").filter(has_text=event["id"])
    await expect(log).to_contain_text("webhook_endpoint.test")
    await expect(log).to_contain_text("succeeded")
    await page.screenshot(path=str(SCREENSHOTS / "dashboard-webhooks.png"), full_page=True)

    page.once("dialog", lambda dialog: dialog.accept())
    await webhooks.get_by_role("button", name=f"Roll the secret of {hook.url}").click()
    rolled = await page.get_by_test_id("webhook-secret").input_value()
    assert rolled.startswith("whsec_") and rolled != secret

    await page.get_by_test_id("webhooks").get_by_role("button", name=f"Disable {hook.url}").click()
    await expect(page.get_by_test_id("flash")).to_contain_text("disabled")
    assert (await _endpoints(staff))[0]["status"] == "disabled"
    await page.get_by_test_id("webhooks").get_by_role("button", name=f"Enable {hook.url}").click()
    assert (await _endpoints(staff))[0]["status"] == "enabled"

    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_test_id("webhooks").get_by_role("button", name=f"Delete {hook.url}").click()
    await expect(page.get_by_test_id("flash")).to_contain_text("deleted")
    assert await _endpoints(staff) == []


async def test_a_bad_url_is_refused_on_its_field_and_nothing_is_added(page, staff):
    await sign_in(page, staff)
    await page.goto(staff.url("/settings"))
    add = page.get_by_test_id("add-webhook")
    await add.get_by_label("URL").fill("http://user:pw@127.0.0.1:9/hooks")
    await add.get_by_role("button", name="Add endpoint").click()
    add = page.get_by_test_id("add-webhook")
    await expect(add.get_by_role("alert")).to_contain_text("credentials")
    await expect(add.get_by_label("URL")).to_have_attribute("aria-invalid", "true")
    await expect(add.get_by_label("URL")).to_have_value("http://user:pw@127.0.0.1:9/hooks")  # kept for a retry
    assert await _endpoints(staff) == []


async def test_a_manager_can_change_no_endpoint(stack, staff, signed_in_as):  # noqa: F811
    status, endpoint = await staff.client.post(f"/b2b/v1/merchants/{staff.merchant_id}/webhook-endpoints",
                                               {"url": "http://127.0.0.1:9/hooks"})
    assert status == 201
    http = await signed_in_as(staff, "manager")
    token = await _session_csrf(stack, "manager", staff)
    for action in ("test", "disable", "roll-secret", "delete"):
        status, _, _ = await http.post(f"/test/webhooks/{endpoint['id']}/{action}", {"csrf": token})
        assert status == 403, (action, status)
    status, _, _ = await http.post("/test/webhooks", {"csrf": token, "url": "http://127.0.0.1:9/other"})
    assert status == 403
    assert [(e["id"], e["status"]) for e in await _endpoints(staff)] == [(endpoint["id"], "enabled")]
