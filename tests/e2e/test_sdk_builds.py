"""Each SDK build, served from the checkout origin, loads on a merchant page of another origin and opens checkout."""

from __future__ import annotations

import pytest

from tests.e2e.support import OVERLAY

BUILDS = ["esm", "cjs", "iife"]  # the fourth, index.d.ts, is checked by `tsc` in the SDK's own tests


@pytest.mark.parametrize("build", BUILDS)
async def test_build_loads_and_opens_a_popup_that_becomes_ready(shop, build):
    created = await shop.session()
    await shop.open(build)
    exports = await shop.page.evaluate(
        "[window.Service.VERSION, typeof window.Service.loadService, typeof window.Service.ServiceError]")
    assert exports == ["0.1.1-beta.17", "function", "function"]

    assert await shop.checkout({"sessionId": created["session_key"]}) is None
    assert await shop.event("ready") is None
    src = await shop.page.get_attribute(f"{OVERLAY} iframe", "src")
    assert src.startswith(f"{shop.stack.base_url}/c/{created['session_key']}?") and "sdk_mode=popup" in src


async def test_the_type_declarations_are_served_beside_the_builds(shop):
    async with shop.stack.http.get(f"{shop.stack.base_url}/sdk/index.d.ts") as resp:
        text = await resp.text()
    assert resp.status == 200
    assert "loadService" in text and "CheckoutOptions" in text and "ServiceErrorCode" in text


async def test_invalid_arguments_throw_synchronously_with_a_service_error(shop):
    await shop.open("esm")
    thrown = await shop.checkout({"sessionId": ""})
    assert thrown["code"] == "invalid_request_error"
    assert await shop.events() == []
