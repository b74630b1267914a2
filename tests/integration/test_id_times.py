"""Ids begin with a time (common/ids.py): a signed request's ids with its X-Timestamp, a keyed request's with the
time it was sent, events with their command's. A keyed request's command id has none, so every retry of the key is
answered with the objects its first request made."""

from __future__ import annotations

import asyncio
import time

from common.ids import made_at
from tests.integration.test_auth import _headers, _raw

QUICK = "/b2b/v1/checkout-sessions/quick"


def _signed(merchant, body: bytes, ts: int, key: str | None = None) -> dict[str, str]:
    headers = _headers(merchant, method="POST", path=QUICK, body=body, ts=ts) | {"Content-Type": "application/json"}
    return headers | ({"Idempotency-Key": key} if key else {})


async def _event_times(stack, order_id: str) -> set[int | None]:
    rows = await stack.pool.fetch("SELECT event_id FROM events WHERE order_id = $1", order_id)
    return {made_at(r["event_id"]) for r in rows}


async def test_a_signed_requests_ids_begin_with_its_timestamp(stack, merchant):
    ts = int(time.time()) - 120
    body = b'{"amount": "3.00"}'
    status, created = await _raw(stack, "POST", QUICK, _signed(merchant, body, ts), body)
    assert status == 201, created
    assert made_at(created["order_id"]) == made_at(created["session_id"]) == ts * 1000
    assert made_at(created["session_key"], 24) == ts * 1000
    assert await _event_times(stack, created["order_id"]) == {ts * 1000}


async def test_a_milliseconds_timestamp_is_kept_to_the_millisecond(stack, merchant):
    ts = int(time.time() * 1000) - 1234
    body = b'{"amount": "3.50"}'
    status, created = await _raw(stack, "POST", QUICK, _signed(merchant, body, ts), body)
    assert status == 201, created
    assert made_at(created["order_id"]) == ts


async def test_a_keyed_retry_an_hour_later_names_the_same_order(stack, merchant):
    body = b'{"amount": "4.00", "external_ref": "keyed-later"}'
    before = int(time.time() * 1000)
    status, first = await _raw(stack, "POST", QUICK, _signed(merchant, body, int(time.time()) - 60, "later-1"), body)
    assert status == 201, first
    sent_at = made_at(first["order_id"])
    assert before <= sent_at <= int(time.time() * 1000)  # when it was sent, not the signed time
    assert await _event_times(stack, first["order_id"]) == {sent_at}
    stack.clock.advance(3600)
    status, again = await _raw(stack, "POST", QUICK, _signed(merchant, body, int(time.time()) + 3600, "later-1"), body)
    assert (status, again["order_id"], again["session_key"]) == (201, first["order_id"], first["session_key"])
    other = b'{"amount": "4.00", "external_ref": "keyed-later-2"}'
    later = int(time.time()) + 3600
    status, second = await _raw(stack, "POST", QUICK, _signed(merchant, other, later, "later-2"), other)
    assert status == 201 and made_at(second["order_id"]) > sent_at + 3_600_000 - 1000
    stored = await stack.pool.fetch("SELECT order_id FROM orders WHERE merchant_id = $1", merchant.merchant_id)
    assert sorted(r["order_id"] for r in stored) == sorted([first["order_id"], second["order_id"]])


async def test_first_requests_of_a_key_at_once_with_their_own_signatures_agree(stack, merchant):
    body = b'{"amount": "5.00"}'
    now = int(time.time())
    answers = await asyncio.gather(*(_raw(stack, "POST", QUICK, _signed(merchant, body, now - n, "at-once-signed"),
                                          body) for n in range(6)))
    assert {status for status, _ in answers} == {201}, answers
    assert len({a["order_id"] for _, a in answers}) == 1
    stored = await stack.pool.fetch("SELECT order_id FROM orders WHERE merchant_id = $1 AND external_ref IS NULL"
                                    " AND order_id = ANY($2)", merchant.merchant_id, [a["order_id"] for _, a in answers])
    assert len(stored) == 1
