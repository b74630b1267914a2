"""Fixtures of the merchant app's tests: the dashboard's (browser, staff, HTTP client) and a phone with touch."""

from __future__ import annotations

import pytest

from tests.dashboard.conftest import http, screenshots, staff  # noqa: F401
from tests.dashboard.support import SIZES
from tests.e2e.conftest import browser  # noqa: F401
from tests.e2e.support import receive_addresses


@pytest.fixture
async def phone(browser, stack):  # noqa: F811
    """A phone-sized context with touch, as the counter's device is; clipboard allowed on the app's origin."""
    context = await browser.new_context(viewport=SIZES["phone"], has_touch=True, is_mobile=True,
                                        device_scale_factor=2)
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.base_url)
    yield context
    await context.close()


@pytest.fixture
async def shop_staff(stack, staff):  # noqa: F811
    """The owner of a merchant that takes payment on the test networks."""
    status, body = await staff.client.patch(f"/b2b/v1/merchants/{staff.merchant_id}/settings",
                                            {"receive_addresses": receive_addresses(staff.merchant_id)})
    assert status == 200, body
    return staff
