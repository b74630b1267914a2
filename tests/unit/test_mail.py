"""Mail reaches a real SMTP server (aiosmtpd in-process) as the recipient reads it."""

from __future__ import annotations

import pytest

from common import config
from common.mail import Mail, Mailer, MailError
from tests.support.processes import free_port


async def test_a_message_arrives_with_its_text_and_html(smtp):
    controller, inbox = smtp
    mailer = Mailer.configured(config.load({}, smtp_url=f"smtp://127.0.0.1:{controller.port}",
                                           mail_from="shop@example.com"))
    await mailer.send(Mail(to="owner@example.com", subject="Refund request", text="Order 7 waits.",
                           html="<p>Order 7 waits.</p>"))
    [msg] = inbox.messages
    assert (msg["From"], msg["To"], msg["Subject"]) == ("shop@example.com", "owner@example.com", "Refund request")
    parts = {part.get_content_type(): part.get_payload(decode=True).decode() for part in msg.walk()
             if not part.is_multipart()}
    assert parts["text/plain"].strip() == "Order 7 waits."
    assert parts["text/html"].strip() == "<p>Order 7 waits.</p>"


def test_without_smtp_url_nothing_is_configured():
    assert Mailer.configured(config.load({})) is None


@pytest.mark.parametrize("env, message", [
    ({"SMTP_URL": "http://x"}, "SMTP_URL must start with smtp:// or smtps://"),
    ({"SMTP_URL": "smtp://127.0.0.1:25"}, "SMTP_URL and MAIL_FROM are set together, or neither"),
    ({"MAIL_FROM": "a@example.com"}, "SMTP_URL and MAIL_FROM are set together, or neither"),
])
def test_half_a_mail_configuration_fails_fast(env, message):
    with pytest.raises(config.ConfigError, match=message):
        config.load(env)


async def test_an_unreachable_server_is_a_mail_error():
    mailer = Mailer(f"smtp://127.0.0.1:{free_port()}", "shop@example.com")
    with pytest.raises(MailError, match="owner@example.com"):
        await mailer.send(Mail(to="owner@example.com", subject="s", text="t"))
