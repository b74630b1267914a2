"""With SMTP_URL and MAIL_FROM set, an invitation reaches the invited person's inbox (an aiosmtpd server in-process);
the link in the mail is the one the owner was shown, and it works."""

from __future__ import annotations

import re

import msgspec
import pytest

from accounts import users
from tests.conftest import running
from tests.dashboard.support import Http, make_staff
from tests.support.processes import free_port


@pytest.fixture
async def mailing_stack(settings, pool, redis, keys, smtp):
    controller, inbox = smtp
    mailing = msgspec.structs.replace(settings, smtp_url=f"smtp://127.0.0.1:{controller.port}",
                                      mail_from="team@shop.example")
    async with running(mailing, pool, redis, keys) as stack:
        yield stack, inbox


def _parts(message) -> dict[str, str]:
    return {part.get_content_type(): part.get_payload(decode=True).decode() for part in message.walk()
            if not part.is_multipart()}


async def test_an_invitation_from_the_api_is_mailed_with_its_link(mailing_stack):
    stack, inbox = mailing_stack
    merchant = await stack.merchant("Corner <b>Shop</b>", livemode=True)
    status, body = await merchant.post(f"/b2b/v1/merchants/{merchant.merchant_id}/staff/invitations",
                                       {"email": "barista@example.com", "role": "cashier"})
    assert status == 201
    [message] = inbox.messages
    assert (message["From"], message["To"]) == ("team@shop.example", "barista@example.com")
    parts = _parts(message)
    assert body["url"] in parts["text/plain"] and "as cashier" in parts["text/plain"]
    assert "Corner &lt;b&gt;Shop&lt;/b&gt;" in parts["text/html"] and "<b>Shop</b>" not in parts["text/html"]


async def test_an_invitation_from_the_team_page_says_it_was_mailed_and_the_mailed_link_signs_in(mailing_stack):
    stack, inbox = mailing_stack
    owner = await make_staff(stack)
    http, invited = Http(owner.dashboard), Http(owner.dashboard)
    try:
        await http.sign_in(owner)
        token = await http.csrf("/team")
        status, text, _ = await http.post("/team/invitations", {"csrf": token, "email": "lead@example.com",
                                                                "role": "manager"})
        assert status == 201 and "Sent by email to lead@example.com" in text
        [message] = inbox.messages
        url = re.search(r"https?://\S+/invite/\S+", _parts(message)["text/plain"]).group(0)
        path = "/invite/" + url.rsplit("/invite/", 1)[1]
        page = (await invited.get(path))[1]
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        status, _, location = await invited.post(path, {"csrf": csrf, "password": "chosen by the lead",
                                                        "password_again": "chosen by the lead"})
        assert (status, location) == (303, "/dashboard/test/orders")
        assert (await users.find(stack.pool, "lead@example.com")).role == "manager"
    finally:
        await http.close()
        await invited.close()


async def test_a_mail_server_out_of_reach_leaves_the_link_on_screen(settings, pool, redis, keys):
    unreachable = msgspec.structs.replace(settings, smtp_url=f"smtp://127.0.0.1:{free_port()}",
                                          mail_from="team@shop.example")
    async with running(unreachable, pool, redis, keys) as stack:
        owner = await make_staff(stack)
        live = await stack.other_mode(owner.client, livemode=True)  # the team is the live key's to manage
        status, body = await live.post(f"/b2b/v1/merchants/{owner.merchant_id}/staff/invitations",
                                               {"email": "someone@example.com", "role": "cashier"})
        assert status == 201 and "/invite/" in body["url"]
        http = Http(owner.dashboard)
        try:
            await http.sign_in(owner)
            token = await http.csrf("/team")
            status, text, _ = await http.post("/team/invitations", {"csrf": token, "email": "other@example.com",
                                                                    "role": "cashier"})
        finally:
            await http.close()
        assert status == 201 and "The email could not be sent: copy the link" in text
        assert 'id="invitation-url"' in text
