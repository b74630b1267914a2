"""What an attempt means for its delivery and its endpoint (pure): the next status, and who is failing."""

from __future__ import annotations

from datetime import datetime

import msgspec

from webhooks import schedule
from webhooks.sender import Attempt

_encode = msgspec.json.Encoder().encode


def record_row(a: Attempt, jitter: schedule.Jitter) -> tuple:
    """The delivery's new state and the attempt's log entry, as store.record takes them."""
    job = a.job
    started = job.round_started_at or a.attempted_at
    failures = job.round_attempts + 1
    status, next_at = "succeeded", None
    if not a.succeeded:
        if schedule.retryable(a.status_code):
            next_at = schedule.next_attempt(failures, started, a.attempted_at, jitter)
        status = "pending" if next_at else "failed"
    return (job.delivery_id, status, next_at, a.attempted_at, a.status_code, a.error, failures, started,
            job.attempts + 1, job.url, _encode(a.request_headers).decode(), a.latency_ms, a.response_body,
            a.succeeded)


def failing_rows(batch: list[Attempt]) -> list[tuple[str, bool, datetime | None]]:
    """Per endpoint: did any attempt succeed, and the first failure after the last success."""
    seen: dict[str, list] = {}
    for a in sorted(batch, key=lambda a: a.attempted_at):
        state = seen.setdefault(a.job.endpoint_id, [False, None])
        if a.succeeded:
            state[:] = [True, None]
        elif state[1] is None:
            state[1] = a.attempted_at
    return [(endpoint_id, succeeded, first_failure) for endpoint_id, (succeeded, first_failure) in seen.items()]
