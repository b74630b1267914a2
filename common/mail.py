"""Mail over SMTP (aiosmtplib) when SMTP_URL and MAIL_FROM are set; without them nothing is sent.

Every message is plain text with an optional HTML alternative. Whatever a caller puts in a message that came
from a user (a buyer's note, an email address) must already be escaped for the HTML part: this module sends
what it is given.
"""

from __future__ import annotations

import logging
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

import aiosmtplib
import msgspec

from common.config import Settings

log = logging.getLogger(__name__)
SEND_TIMEOUT_S = 10.0


class Mail(msgspec.Struct, frozen=True, kw_only=True):
    to: str
    subject: str
    text: str
    html: str = ""


class MailError(Exception):
    """The SMTP server could not be reached or refused the message; the caller decides whether to retry."""


class Mailer:
    """Sends through one SMTP server; `Mailer.configured(settings)` is None when mail is not set up."""

    def __init__(self, smtp_url: str, sender: str) -> None:
        parts = urlsplit(smtp_url)
        self.sender = sender
        self.host = parts.hostname or "127.0.0.1"
        self.tls = parts.scheme == "smtps"
        self.port = parts.port or (465 if self.tls else 25)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None

    @classmethod
    def configured(cls, settings: Settings) -> Mailer | None:
        return cls(settings.smtp_url, settings.mail_from) if settings.smtp_url and settings.mail_from else None

    def message(self, mail: Mail) -> EmailMessage:
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = self.sender, mail.to, mail.subject
        msg.set_content(mail.text)
        if mail.html:
            msg.add_alternative(mail.html, subtype="html")
        return msg

    async def send(self, mail: Mail) -> None:
        try:
            await aiosmtplib.send(self.message(mail), hostname=self.host, port=self.port, use_tls=self.tls,
                                  username=self.username, password=self.password, timeout=SEND_TIMEOUT_S)
        except (aiosmtplib.SMTPException, OSError) as exc:
            raise MailError(f"mail to {mail.to} not sent: {type(exc).__name__}: {exc}") from exc
