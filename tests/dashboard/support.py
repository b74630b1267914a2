"""What the dashboard tests share: staff users, a cookie-keeping HTTP client, signing in a browser page, QR decoding."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import zxingcpp
from PIL import Image
from playwright.async_api import Locator, Page, expect

from accounts import users
from testkit.signed import Signed

PASSWORD = "correct horse battery staple"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots" / "dashboard"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class Staff:
    client: Signed  # the merchant's signed B2B client, to set up and read back what the dashboard did
    email: str
    password: str
    dashboard: str  # the dashboard's absolute base URL

    @property
    def merchant_id(self) -> str:
        return self.client.merchant_id

    def url(self, path: str, mode: str = "test") -> str:
        return f"{self.dashboard}/{mode}{path}"


async def make_staff(stack, client: Signed | None = None, name: str = "Dash Coffee", role: str = "owner") -> Staff:
    client = client or await stack.merchant(name)
    email = f"{role}+{client.merchant_id}@example.com"
    await users.create(stack.pool, client.merchant_id, email, PASSWORD, role)
    return Staff(client, email, PASSWORD, f"{stack.base_url}/dashboard")


class Http:
    """The dashboard over plain HTTP as a browser without scripts uses it: cookies kept, redirects not followed."""

    def __init__(self, dashboard: str):
        self.dashboard = dashboard
        # unsafe=True: aiohttp keeps no cookies for IP hosts otherwise, and the test server is 127.0.0.1.
        self.session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))

    async def close(self) -> None:
        await self.session.close()

    async def get(self, path: str) -> tuple[int, str]:
        async with self.session.get(self.dashboard + path, allow_redirects=False) as response:
            return response.status, await response.text()

    async def csrf(self, path: str) -> str:
        status, text = await self.get(path)
        assert status == 200, (path, status)
        return _CSRF.search(text).group(1)

    async def post(self, path: str, data: dict, headers: dict | None = None) -> tuple[int, str, str | None]:
        async with self.session.post(self.dashboard + path, data=data, headers=headers,
                                     allow_redirects=False) as response:
            return response.status, await response.text(), response.headers.get("Location")

    async def sign_in(self, staff: Staff, password: str | None = None) -> tuple[int, str, str | None]:
        token = await self.csrf("/signin")
        return await self.post("/signin", {"csrf": token, "email": staff.email, "password": password or staff.password})


async def sign_in(page: Page, staff: Staff) -> None:
    await page.goto(f"{staff.dashboard}/signin")
    await page.get_by_label("Email").fill(staff.email)
    await page.get_by_label("Password").fill(staff.password)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(re.compile(r".*/dashboard/(test|live)/orders$"))


async def open_dialog(page: Page, staff: Staff, order_id: str) -> Locator:
    await page.goto(staff.url(f"/orders/{order_id}"))
    await page.get_by_test_id("issue-refund").click()
    dialog = page.get_by_test_id("refund-dialog")
    await expect(dialog).to_be_visible()
    return dialog


async def execute_now(dialog: Locator, amount: str, destination: str, to: str, reason: str = "") -> None:
    """Fill the dialog's execute-now form and send it; `destination` is "network|token address"."""
    await dialog.get_by_label("Amount in USD").fill(amount)
    await dialog.get_by_label("Reason").fill(reason)
    await dialog.get_by_label("Network and token").select_option(destination)
    await dialog.get_by_label("The customer's address").fill(to)
    await dialog.get_by_role("button", name="Create refund").click()


def last_part(url: str) -> str:
    return url.rsplit("/", 1)[1]


async def decode_qr(locator: Locator) -> str:
    """What a phone camera would read: the QR as the browser painted it, decoded by zxing-cpp."""
    png = await locator.screenshot()
    found = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)).convert("L"), formats=zxingcpp.BarcodeFormat.QRCode)
    assert len(found) == 1, f"expected one QR code, found {len(found)}"
    return found[0].text
