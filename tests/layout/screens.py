"""Every page a merchant, a cashier or a buyer sees, in one table: where it is, what shows it is ready, and what a
person does first on it (open a dialog, charge at the counter). A page added to the product gets a row here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from playwright.async_api import Page, expect

from accounts import invitations
from common.clock import utcnow
from notify import kinds, store
from tests.dashboard.support import SIZES, Staff, make_staff
from tests.dashboard.test_screens import ITEMS, refund_on, rich_order
from tests.e2e.support import receive_addresses
from tests.integration.helpers import expire_due, pay, quick
from tests.integration.test_refund_requests_api import Buyer, minted
from tests.integration.test_refunds_api import paid_order


@dataclass
class World:
    """One merchant with something on every page: orders in each state, refunds, a review queue, a team, a payment
    link, notifications; `urls` names each page's address by the row that opens it."""

    stack: object
    owner: Staff
    urls: dict[str, str] = field(default_factory=dict)
    session_state: dict | None = None  # the owner's signed-in browser cookies

    async def sale_paid(self, page: Page) -> None:
        sale = await self.stack.pool.fetchrow(
            "SELECT order_id, livemode FROM counter_sales WHERE merchant_id = $1 ORDER BY created_at DESC LIMIT 1",
            self.owner.merchant_id)
        assert sale is not None and not sale["livemode"], sale
        status, body = await pay(self.owner.client, sale["order_id"], "12.50")
        assert status == 201, body


async def _checkout(world: World, name: str, amount_paid: str | None = None, **body) -> None:
    created = await quick(world.owner.client, line_items=ITEMS, amount=None, **body)
    if amount_paid:
        assert (await pay(world.owner.client, created["order_id"], amount_paid))[0] == 201
    world.urls[name] = f"{world.stack.base_url}/c/{created['session_key']}?locale=en"
    return created


async def _notify(world: World, order_id: str, refund_id: str) -> None:
    """A payment and a refund told in the bell, as the notifier records them from the events stream."""
    facts = {"order_id": order_id, "order_number": "1001", "amount": "33.25", "network": "sepolia",
             "refund_id": refund_id, "refund_network": "sepolia"}
    merchant = world.owner.merchant_id
    notices = [kinds.from_event("evt_layout_paid", "payment.received", merchant, False, facts),
               kinds.from_event("evt_layout_refund", "payment.refund.executed", merchant, False, facts)]
    async with world.stack.pool.acquire() as conn:
        await store.record(conn, notices, utcnow(), mail=False)


async def build(stack) -> World:
    owner = await make_staff(stack, name="Layout Coffee Roasters")
    client, dashboard = owner.client, owner.dashboard
    status, body = await client.patch(f"/b2b/v1/merchants/{owner.merchant_id}/settings",
                                      {"receive_addresses": receive_addresses(owner.merchant_id)})
    assert status == 200, body
    world = World(stack, owner)
    await make_staff(stack, client, role="manager")
    await make_staff(stack, client, role="cashier")
    # Made in the database, not with the live key the API asks for: a live key would start the app in live mode.
    async with stack.pool.acquire() as conn:
        _, invitation = await invitations.create(conn, owner.merchant_id, "new.barista@example.com", "cashier",
                                                 "test", stack.clock())

    order_id = await rich_order(client)
    paid = await paid_order(client, "10.00")
    refund_id = await refund_on(client, paid, "sepolia")
    pending = await paid_order(client, "8.00")
    waiting = await minted(client, pending, "8.00")
    assert (await Buyer(stack).submit(waiting["token"], "8.00"))[0] == 201
    form = await minted(client, await paid_order(client, "6.00"), "6.00")
    status, link = await client.post(f"/b2b/v1/merchants/{owner.merchant_id}/payment-links", {
        "name": "Monthly tea box", "description": "Three teas a month, picked by our roaster.", "amount": "24.00"})
    assert status == 201, link
    await _notify(world, order_id, refund_id)

    await _checkout(world, "checkout-waiting")
    await _checkout(world, "checkout-partially-paid", "10.00")
    paid_session = await _checkout(world, "checkout-paid", "33.25")
    canceled = await _checkout(world, "checkout-canceled")
    assert (await client.patch(f"/b2b/v1/orders/{canceled['order_id']}/cancel", {}))[0] == 200
    await _checkout(world, "checkout-expired", ttl_seconds=60)
    await expire_due(stack, 61)
    receipt = (await client.get(f"/b2b/v1/orders/{paid_session['order_id']}"))[1]["receipt_url"]

    checkout_base, base = stack.settings.checkout_base(), stack.base_url
    world.urls.update({
        "home": f"{base}/",
        "signin": f"{dashboard}/signin",
        "invitation": f"{dashboard}/invite/{invitation}",
        "orders": f"{dashboard}/test/orders?created_gte=2026-01-01&created_lt=2030-01-01&paid_gte=2026-01-01"
                  "&paid_lt=2030-01-01",
        "order": f"{dashboard}/test/orders/{order_id}",
        "refund-dialog": f"{dashboard}/test/orders/{order_id}",
        "execution": f"{dashboard}/test/refunds/{refund_id}",
        "review": f"{dashboard}/test/review",
        "settings": f"{dashboard}/test/settings",
        "team": f"{dashboard}/team",
        "audit": f"{dashboard}/audit",
        "notifications": f"{dashboard}/test/notifications",
        "payment-links": f"{dashboard}/test/payment-links",
        "counter": f"{dashboard}/app", "counter-sale": f"{dashboard}/app", "counter-paid": f"{dashboard}/app",
        "receipt": receipt.replace(checkout_base, base) + "?locale=en",
        "refund-form": form["refund_url"].replace(checkout_base, base) + "?locale=en",
        "refund-submitted": waiting["refund_url"].replace(checkout_base, base) + "?locale=en",
        "refund-link": f"{dashboard}/test/refund-requests/{form['token']}",
        "counter-sales": f"{dashboard}/app",
        "payment-link": link["url"].replace(checkout_base, base) + "?locale=en",
    })
    return world


async def _open_dialog(page: Page, world: World) -> None:
    await page.get_by_test_id("issue-refund").click()
    await expect(page.get_by_test_id("refund-dialog")).to_be_visible()


async def _charge(page: Page, world: World) -> None:
    for key in "1250":
        await page.locator(f'[data-key="{key}"]').click()
    await page.get_by_test_id("charge").click()
    await expect(page.get_by_test_id("sale-status")).to_have_text("Waiting for payment")


async def _charge_and_pay(page: Page, world: World) -> None:
    await _charge(page, world)
    await world.sale_paid(page)
    await expect(page.get_by_test_id("sale-receipt")).to_be_visible()


async def _todays_sales(page: Page, world: World) -> None:
    await page.get_by_role("button", name="Today's sales").click()
    await expect(page.get_by_test_id("totals")).to_be_visible()


@dataclass(frozen=True)
class Screen:
    ready: str  # the test id of what the page shows once it is ready
    signed_in: bool = True  # as the merchant's owner; else a stranger's browser (a buyer, someone invited)
    then: Callable[[Page, World], Awaitable[None]] | None = None


SCREENS: dict[str, Screen] = {
    "home": Screen("home", signed_in=False),
    "signin": Screen("signin-form", signed_in=False),
    "invitation": Screen("invite-accept", signed_in=False),
    "orders": Screen("orders"),
    "order": Screen("timeline"),
    "refund-dialog": Screen("timeline", then=_open_dialog),
    "refund-link": Screen("refund-link-result"),
    "execution": Screen("send-address"),
    "review": Screen("tokens"),
    "settings": Screen("addresses"),
    "team": Screen("members"),
    "audit": Screen("audit-events"),
    "notifications": Screen("notifications"),
    "payment-links": Screen("payment-links"),
    "counter": Screen("sell"),
    "counter-sale": Screen("sell", then=_charge),
    "counter-paid": Screen("sell", then=_charge_and_pay),
    "counter-sales": Screen("sell", then=_todays_sales),
    "checkout-waiting": Screen("qr", signed_in=False),
    "checkout-partially-paid": Screen("qr", signed_in=False),
    "checkout-paid": Screen("receipt-link", signed_in=False),
    "checkout-canceled": Screen("status", signed_in=False),
    "checkout-expired": Screen("status", signed_in=False),
    "receipt": Screen("receipt", signed_in=False),
    "refund-form": Screen("refund-form", signed_in=False),
    "refund-submitted": Screen("refund-status-card", signed_in=False),
    "payment-link": Screen("payment-link", signed_in=False),
}


@asynccontextmanager
async def opened(browser, world: World, name: str, size: str = "desktop"):
    """The page of SCREENS[name] shown as a person would get to it, in a browser context of its own."""
    screen = SCREENS[name]
    context = await browser.new_context(viewport=SIZES[size],
                                        storage_state=world.session_state if screen.signed_in else None)
    try:
        page = await context.new_page()
        await page.goto(world.urls[name])
        await expect(page.get_by_test_id(screen.ready).first).to_be_visible()
        if screen.then:
            await screen.then(page, world)
        yield page
    finally:
        await context.close()
