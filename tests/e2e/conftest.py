"""Fixtures of the browser tests: one Chromium per run, the merchant's site on its own origin, a fresh page per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from tests.e2e import site
from tests.e2e.support import Shop, receive_addresses

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# TOOLCHAIN.md: Debian's Chromium, never a browser downloaded by `playwright install`.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@pytest.fixture(scope="session")
async def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium` (Debian's; never `playwright install`)")
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        await chromium.close()


@pytest.fixture(scope="session")
async def merchant_site(stack):
    server = await site.start(stack.base_url)
    yield str(server.make_url("")).rstrip("/")
    await server.close()


@pytest.fixture
async def context(browser, stack):
    ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
    await ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.base_url)
    yield ctx
    await ctx.close()


@pytest.fixture
async def page(context):
    return await context.new_page()


@pytest.fixture
async def shop(stack, merchant_site, page):
    """A test-mode merchant with receive addresses on four networks, and its shop page (not yet loaded)."""
    client = await stack.merchant("E2E Coffee Roasters")
    addresses = receive_addresses(client.merchant_id)
    status, body = await client.patch(f"/b2b/v1/merchants/{client.merchant_id}/settings",
                                      {"receive_addresses": addresses})
    assert status == 200, body
    return Shop(stack, client, merchant_site, page, addresses)


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS

