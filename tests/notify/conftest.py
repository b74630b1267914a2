"""Fixtures of the notification tests: a notifier mailing to the in-process SMTP server, a merchant's team of three
roles, and the staff app's phone."""

from __future__ import annotations

import asyncio

import pytest

from common import config
from common.mail import Mailer
from notify.notifier import Notifier
from tests.app.conftest import phone  # noqa: F401
from tests.dashboard.support import make_staff
from tests.e2e.conftest import browser  # noqa: F401
from web.edge.dashboard_site import dashboard_url


def mailer_to(port: int) -> Mailer:
    return Mailer.configured(config.load({}, smtp_url=f"smtp://127.0.0.1:{port}", mail_from="shop@example.com"))


@pytest.fixture
async def notifier(stack, redis, keys, smtp):
    n = Notifier(stack.pool, redis, keys, mailer_to(smtp[0].port), dashboard_url(stack.settings),
                 clock=stack.clock, group=f"notifications-{id(stack)}-{asyncio.get_running_loop().time()}")
    await n.start()
    return n


@pytest.fixture
async def team(stack):
    owner = await make_staff(stack, name="Bell Bakery")
    manager = await make_staff(stack, owner.client, role="manager")
    cashier = await make_staff(stack, owner.client, role="cashier")
    return owner, manager, cashier
