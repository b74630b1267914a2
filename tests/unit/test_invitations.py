"""An invitation's state at a moment, and its mail as the invited person reads it (escaped where it is HTML)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from accounts.invitations import TTL, Invitation, mail

MADE = datetime(2026, 11, 27, 9, 0, tzinfo=timezone.utc)


def _invitation(**changed) -> Invitation:
    return Invitation(**{"invitation_id": "inv_1", "merchant_id": "mer_1", "email": "till@example.com",
                         "role": "cashier", "invited_by": "usr_1", "created_at": MADE, "expires_at": MADE + TTL,
                         "accepted_at": None, "revoked_at": None, **changed})


@pytest.mark.parametrize(("changed", "at", "state"), [
    ({}, MADE, "pending"),
    ({}, MADE + TTL - timedelta(seconds=1), "pending"),
    ({}, MADE + TTL, "expired"),
    ({"accepted_at": MADE}, MADE + timedelta(hours=1), "used"),
    ({"accepted_at": MADE}, MADE + TTL * 2, "used"),  # used says more than expired
    ({"revoked_at": MADE}, MADE + timedelta(hours=1), "revoked"),
    ({"revoked_at": MADE}, MADE + TTL * 2, "revoked"),
])
def test_the_state_of_an_invitation_at_a_moment(changed, at, state):
    assert _invitation(**changed).state(at) == state


def test_an_invitation_lives_72_hours():
    assert TTL == timedelta(hours=72)


def test_the_mail_carries_the_link_and_escapes_the_merchants_name_in_html():
    sent = mail(_invitation(), "Tom & <Jerry>", "https://shop.example/dashboard/invite/inv_abc")
    assert sent.to == "till@example.com" and "Tom & <Jerry>" in sent.subject
    assert "https://shop.example/dashboard/invite/inv_abc" in sent.text and "as cashier" in sent.text
    assert "2026-11-30 09:00 UTC" in sent.text
    assert "Tom &amp; &lt;Jerry&gt;" in sent.html and "<Jerry>" not in sent.html
    assert 'href="https://shop.example/dashboard/invite/inv_abc"' in sent.html
