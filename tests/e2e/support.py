"""What the browser tests share: the test merchant's addresses and a driver for its shop page."""

from __future__ import annotations

import hashlib
from urllib.parse import urlencode

from playwright.async_api import Frame, Page
from pytoniq_core import Address
from solders.pubkey import Pubkey
from tronpy import keys
from web3 import Web3

from tests.integration.helpers import QUICK, pay

OVERLAY = "div[role=dialog]"
SEPOLIA_USDC = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"


def _digest(label: str, size: int) -> bytes:
    return hashlib.sha256(label.encode()).digest()[:size]


def receive_addresses(seed: str = "") -> dict[str, str]:
    """Addresses on four families, well formed for each chain (the settings endpoint checks them).

    Each merchant gets its own (seed): sessions quoting one address take unique amounts from one range.
    """
    evm = Web3.to_checksum_address(_digest(f"evm{seed}", 20))
    return {
        "sepolia": evm,
        "base-sepolia": evm,
        "solana-devnet": str(Pubkey.from_bytes(_digest(f"solana{seed}", 32))),
        "tron-nile": keys.to_base58check_address("41" + _digest(f"tron{seed}", 20).hex()),
        "ton-testnet": Address("0:" + _digest(f"ton{seed}", 32).hex()).to_str(
            is_user_friendly=True, is_url_safe=True, is_bounceable=False, is_test_only=True),
    }


class Shop:
    def __init__(self, stack, client, site: str, page: Page, addresses: dict[str, str]):
        self.stack, self.client, self.site, self.page = stack, client, site, page
        self.addresses = addresses  # the merchant's receive addresses, as configured

    async def session(self, **body) -> dict:
        """A quick session of 10.00 USD unless `amount` or `line_items` says otherwise."""
        default = {} if "line_items" in body else {"amount": "10.00"}
        status, created = await self.client.post(QUICK, {**default, **body})
        assert status == 201, created
        return created

    async def pay(self, order_id: str, amount: str) -> None:
        status, body = await pay(self.client, order_id, amount)
        assert status == 201, body

    def checkout_url(self, session_key: str, **query: str) -> str:
        url = f"{self.stack.base_url}/c/{session_key}"
        return f"{url}?{urlencode(query)}" if query else url

    async def open(self, build: str = "iife") -> None:
        await self.page.goto(f"{self.site}/shop?{urlencode({'build': build, 'pk': self.client.public_key})}")
        await self.page.wait_for_function("window.Service && typeof window.Service.loadService === 'function'")

    async def checkout(self, options: dict, checkout_url: str | None = None):
        """sdk.checkout(options) on the shop page; returns the synchronous error or None."""
        return await self.page.evaluate("([o, url]) => openCheckout(o, url)", [options, checkout_url])

    async def events(self, name: str | None = None) -> list:
        found = await self.page.evaluate("window.events")
        return [e for e in found if name is None or e["name"] == name]

    async def event(self, name: str, timeout: float = 10_000):
        await self.page.wait_for_function("(n) => window.events.some((e) => e.name === n)", arg=name, timeout=timeout)
        return (await self.events(name))[0]["arg"]

    async def resize(self, frame: Frame, asked: dict) -> dict:
        """Posts SERVICE_RESIZE from inside the checkout frame (the right origin and window for the SDK) and
        returns the size the SDK gave its frame for that very message: the page's own later resizes (the
        reflow a new width causes) cannot race the answer."""
        await self.page.evaluate("""() => window.resized || (window.resized = [], window.addEventListener('message', (e) => {
            const m = e.data;
            const el = document.querySelector('div[role=dialog]') || document.querySelector('#embed iframe');
            // Registered after the SDK's own listener, so it runs right after the SDK handled the message.
            if (m && m.type === 'SERVICE_RESIZE') {
                window.resized.push({asked: m.height, height: el.style.height, width: el.style.width});
            }
        }))""")
        await frame.evaluate(
            "(m) => parent.postMessage(Object.assign({source: 'service', type: 'SERVICE_RESIZE'}, m), '*')", asked)
        await self.page.wait_for_function("(h) => window.resized.some((r) => r.asked === h)", arg=asked["height"])
        answer = next(r for r in await self.page.evaluate("window.resized") if r["asked"] == asked["height"])
        return {"height": answer["height"], "width": answer["width"]}

    async def frame(self) -> Frame:
        handle = await self.page.wait_for_selector("iframe")
        frame = await handle.content_frame()
        await frame.wait_for_selector("#status")
        return frame


def console_errors(page: Page) -> list[str]:
    """Errors the page logs or throws from now on (frames included)."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(f"{message.text} {message.location}") if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return errors
