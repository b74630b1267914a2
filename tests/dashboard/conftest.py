"""Fixtures of the dashboard tests: the e2e suite's browser, context and page (Debian's Chromium, clipboard allowed
on the app's origin), staff users of fresh merchants, a cookie-keeping HTTP client, and users of each role signed in
over it."""

from __future__ import annotations

import pytest

from tests.dashboard.support import SCREENSHOTS, Http, make_staff
from tests.e2e.conftest import browser, context, page  # noqa: F401


@pytest.fixture
async def staff(stack):
    return await make_staff(stack)


@pytest.fixture
async def http(stack):
    client = Http(f"{stack.base_url}/dashboard")
    yield client
    await client.close()


@pytest.fixture
async def clients():
    """Any number of cookie-keeping clients (several people, or one person's several browsers), all closed after."""
    opened: list[Http] = []

    def make(dashboard: str) -> Http:
        opened.append(Http(dashboard))
        return opened[-1]

    yield make
    for client in opened:
        await client.close()


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
async def signed_in_as(stack):
    """A user of the given role of the same merchant as `staff`, signed in over plain HTTP."""
    opened = []

    async def sign_in(staff, role: str) -> Http:
        user = await make_staff(stack, staff.client, role=role) if role != "owner" else staff
        client = Http(staff.dashboard)
        opened.append(client)
        status, _, _ = await client.sign_in(user)
        assert status == 303
        return client

    yield sign_in
    for client in opened:
        await client.close()
