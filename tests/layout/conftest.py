"""Fixtures of the layout tests: the e2e suite's Chromium, and one merchant's world the owner is signed in to."""

from __future__ import annotations

import pytest

from tests.dashboard.support import sign_in
from tests.e2e.conftest import SCREENSHOTS, browser  # noqa: F401
from tests.layout.screens import build


@pytest.fixture(scope="module")
async def world(stack, browser):  # noqa: F811
    built = await build(stack)
    context = await browser.new_context()
    try:
        await sign_in(await context.new_page(), built.owner)
        built.session_state = await context.storage_state()
    finally:
        await context.close()
    return built


@pytest.fixture(scope="session")
def shots():
    folder = SCREENSHOTS / "layout"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
