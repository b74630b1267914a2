"""The pure parts, one case a row: signatures, the retry schedule (and its documented table), the
address check, and which failures make an endpoint failing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from webhooks import schedule, signing, ssrf
from webhooks.outcomes import failing_rows
from webhooks.sender import Attempt, Job

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def test_signature_is_sha256_hex_over_timestamp_dot_body():
    body = b'{"id":"evt_1"}'
    expected = hmac.new(b"whsec_abc", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signing.sign("whsec_abc", 1700000000, body) == "sha256=" + expected
    assert signing.signature_header(["whsec_new", "whsec_old"], 5, body) == ",".join(
        [signing.sign("whsec_new", 5, body), signing.sign("whsec_old", 5, body)])


SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()


def test_headers_name_the_event():
    h = signing.headers([SECRET], 7, b"{}", "evt_1", "payment.settled")
    assert h == {"Content-Type": "application/json", "User-Agent": "Service-Webhooks/1",
                 "X-Service-Event-Id": "evt_1", "X-Service-Event-Type": "payment.settled",
                 "X-Service-Timestamp": "7", "X-Service-Signature": signing.sign(SECRET, 7, b"{}"),
                 "webhook-id": "evt_1", "webhook-timestamp": "7",
                 "webhook-signature": signing.sign_standard(SECRET, "evt_1", 7, b"{}")}


def test_standard_signature_is_base64_hmac_of_the_secret_bytes_over_id_timestamp_body():
    expected = base64.b64encode(hmac.new(b"k" * 32, b"evt_1.7.{}", hashlib.sha256).digest()).decode()
    assert signing.sign_standard(SECRET, "evt_1", 7, b"{}") == "v1," + expected
    older = "whsec_" + base64.urlsafe_b64encode(b"\xfb\xff" * 16).decode().rstrip("=")
    assert signing.standard_key(older) == b"\xfb\xff" * 16
    assert signing.standard_secret(older) == "whsec_" + base64.b64encode(b"\xfb\xff" * 16).decode()
    assert signing.standard_signature_header([SECRET, older], "evt_1", 7, b"{}") == " ".join(
        [signing.sign_standard(SECRET, "evt_1", 7, b"{}"), signing.sign_standard(older, "evt_1", 7, b"{}")])


def test_new_secrets_are_standard_base64_of_32_bytes():
    secret = signing.new_secret()
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", secret) and signing.standard_secret(secret) == secret
    with pytest.raises(ValueError):
        signing.standard_key("whsec_not base64!")


@pytest.mark.parametrize("failures,minutes", [(1, 1), (2, 2), (3, 4), (4, 8), (10, 512), (11, 720), (30, 720)])
def test_wait_doubles_up_to_twelve_hours(failures, minutes):
    assert schedule.wait(failures, lambda: 1.0) == timedelta(minutes=minutes)
    assert schedule.wait(failures, lambda: 0.8) == timedelta(minutes=minutes) * 0.8


def test_jitter_stays_within_a_fifth():
    assert all(0.8 <= schedule.uniform_jitter() < 1.2 for _ in range(1000))


@pytest.mark.parametrize("elapsed,gives_up", [(timedelta(0), False), (timedelta(days=3) - timedelta(seconds=1), False),
                                              (timedelta(days=3), True), (timedelta(days=4), True)])
def test_a_round_gives_up_after_three_days(elapsed, gives_up):
    got = schedule.next_attempt(5, T0, T0 + elapsed, lambda: 1.0)
    assert (got is None) == gives_up
    if not gives_up:
        assert got == T0 + elapsed + timedelta(minutes=16)


@pytest.mark.parametrize("status,retried", [(None, True), (200, True), (302, True), (400, False), (401, False),
                                            (404, False), (408, True), (410, False), (429, True), (499, False),
                                            (500, True), (503, True)])
def test_retryable(status, retried):
    assert schedule.retryable(status) is retried


def _documented_offsets() -> list[timedelta]:
    text = DOC.read_text().split("## Retries", 1)[1].split("**Disabling.**", 1)[0]
    offsets = {}
    for n, when in re.findall(r"\| (\d+) \| ([^|]+?) \|", text):
        spoken = when.split(",")[0]
        hours = re.search(r"(\d+) h", spoken)
        minutes = re.search(r"(\d+) min", spoken)
        offsets[int(n)] = timedelta(hours=int(hours.group(1)) if hours else 0,
                                    minutes=int(minutes.group(1)) if minutes else 0)
    return [offsets[n] for n in sorted(offsets)]


def test_the_documented_retry_table_is_the_schedule():
    assert _documented_offsets() == schedule.nominal_table()
    assert len(schedule.nominal_table()) == 16


@pytest.mark.parametrize("address,allowed", [
    ("93.184.216.34", True), ("2606:2800:220:1:248:1893:25c8:1946", True),
    ("127.0.0.1", False), ("10.0.0.1", False), ("172.16.5.4", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False), ("224.0.0.1", False),
    ("::1", False), ("fe80::1", False), ("fc00::1", False), ("::ffff:10.0.0.1", False), ("::ffff:8.8.8.8", True),
])
def test_public_addresses(address, allowed):
    assert ssrf.public(address) is allowed


@pytest.mark.parametrize("url,live,refused", [
    ("https://hooks.example.com/x", True, None),
    ("http://hooks.example.com/x", True, "url_https_required"),
    ("http://localhost:3000/x", False, None),
    ("https://127.0.0.1/x", True, "url_not_public"),
    ("https://printer.local/x", True, "url_not_public"),
    ("https://u:p@example.com/x", False, "invalid_url"),
    ("https:///nohost", False, "invalid_url"),
    ("https://a\U0010ca13b.example/x", False, "invalid_url"),  # a host name IDNA cannot encode
    ("https://example.com:99999/x", False, "invalid_url"),
])
def test_registration_check(url, live, refused):
    got = ssrf.refusal(url, live)
    assert (got[0] if got else None) == refused


def _attempt(endpoint: str, seconds: int, status: int | None) -> Attempt:
    job = Job(delivery_id="d", event_id="e", event_type="t", endpoint_id=endpoint, livemode=False, url="u",
              secrets=[], payload=b"", attempts=0, round_attempts=0, round_started_at=None)
    return Attempt(job=job, attempted_at=T0 + timedelta(seconds=seconds), request_headers={}, status_code=status)


@pytest.mark.parametrize("answers,succeeded,first_failure", [
    ([(0, 500)], False, 0),
    ([(0, 500), (1, 500)], False, 0),
    ([(0, 500), (1, 200)], True, None),
    ([(0, 200), (1, 500), (2, 503)], True, 1),
    ([(2, 500), (0, 500), (1, 200)], True, 2),  # by attempt time, not by arrival
])
def test_failing_since_is_the_first_failure_after_the_last_success(answers, succeeded, first_failure):
    [(endpoint, ok, first)] = failing_rows([_attempt("we_1", s, status) for s, status in answers])
    assert (endpoint, ok) == ("we_1", succeeded)
    assert first == (None if first_failure is None else T0 + timedelta(seconds=first_failure))
