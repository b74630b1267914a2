"""One real deployment (web, actors, webhooks) behind the conformance harness, shared by this folder's tests."""

from __future__ import annotations

import pytest

from tests.clients.harness import started


@pytest.fixture(scope="module")
async def harness():
    async with started() as running:
        yield running
