"""A real SMTP server in-process (aiosmtpd) and the messages it received, for every test that reads mail."""

from __future__ import annotations

import email

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message

from tests.support.ports import free_port


class Inbox(Message):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[email.message.Message] = []

    def handle_message(self, message) -> None:
        self.messages.append(message)


def serving() -> tuple[Controller, Inbox]:
    """A started server on a free port of 127.0.0.1 and its inbox; stop the controller when done."""
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    return controller, inbox
