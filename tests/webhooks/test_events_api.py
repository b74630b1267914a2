"""GET /b2b/v1/events and /events/{id}: the envelopes webhooks carry, read back from the event log."""

from __future__ import annotations

import json

import msgspec

from actors.publication import PublicEvent
from tests.integration.helpers import pay, quick


async def _published(redis, keys, event_ids: set[str]) -> dict[str, dict]:
    """The envelopes as the actors published them on the stream (routing fields dropped)."""
    found = {}
    for _id, fields in await redis.xrevrange(keys.events, count=2000):
        event = msgspec.json.decode(fields[b"e"], type=PublicEvent)
        if event.id in event_ids:
            found[event.id] = {"id": event.id, "type": event.type, "created_at": event.created_at,
                               "livemode": event.livemode, "data": event.data}
    return found


async def test_events_are_the_published_envelopes_newest_first(stack, merchant, redis, keys):
    first = await quick(merchant, external_ref="ERP-77", metadata={"channel": "web"})
    await pay(merchant, first["order_id"], "10.00")
    second = await quick(merchant)
    status, listing = await merchant.get("/b2b/v1/events?limit=100")
    assert status == 200 and listing["object"] == "list" and not listing["has_more"]
    events = listing["data"]
    assert [e["type"] for e in events] == [
        "checkout_session.created", "order.created",  # the second order
        "payment.settled", "checkout_session.completed", "payment.received",
        "checkout_session.created", "order.created"]
    assert events[0]["data"]["order_id"] == second["order_id"]
    assert all(list(e) == ["id", "type", "created_at", "livemode", "data"] for e in events)
    assert "ERP-77" not in json.dumps(events) and "external_ref" not in json.dumps(events)
    # order_status is the status right after each event's transition, not the order's current one: the payment
    # that made the order PAID says PAID on each of its three events, the creation PENDING.
    statuses = [e["data"]["order_status"] for e in events if e["data"]["order_id"] == first["order_id"]]
    assert statuses == ["PAID", "PAID", "PAID", "PENDING", "PENDING"]
    published = await _published(redis, keys, {e["id"] for e in events})
    assert [published[e["id"]] for e in events] == events
    for e in events:
        status, one = await merchant.get(f"/b2b/v1/events/{e['id']}")
        assert status == 200 and one == e


async def test_pages_and_filters(stack, merchant):
    a = (await quick(merchant))["order_id"]
    b = (await quick(merchant))["order_id"]
    seen, cursor = [], None
    while True:
        status, page = await merchant.get("/b2b/v1/events?limit=1" + (f"&cursor={cursor}" if cursor else ""))
        assert status == 200 and len(page["data"]) == 1
        seen += page["data"]
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert len(seen) == 4 and len({e["id"] for e in seen}) == 4
    status, created = await merchant.get("/b2b/v1/events?type=order.created")
    assert [e["data"]["order_id"] for e in created["data"]] == [b, a]
    status, of_a = await merchant.get(f"/b2b/v1/events?order_id={a}")
    assert {e["data"]["order_id"] for e in of_a["data"]} == {a} and len(of_a["data"]) == 2
    status, both = await merchant.get(f"/b2b/v1/events?order_id={a}&type=checkout_session.created")
    assert [e["type"] for e in both["data"]] == ["checkout_session.created"]
    status, none = await merchant.get("/b2b/v1/events?type=payment.refund.executed")
    assert none["data"] == [] and not none["has_more"]


async def test_other_merchants_and_modes_see_nothing(stack, merchant):
    order_id = (await quick(merchant))["order_id"]
    status, listing = await merchant.get("/b2b/v1/events")
    event_id = listing["data"][0]["id"]
    other = await stack.merchant("Other")
    live = await stack.other_mode(merchant, livemode=True)
    for client in (other, live):
        status, body = await client.get(f"/b2b/v1/events/{event_id}")
        assert (status, body["error"]["code"], body["error"]["param"]) == (404, "event_not_found", "event_id")
        status, body = await client.get(f"/b2b/v1/events?order_id={order_id}")
        assert status == 200 and body["data"] == []


async def test_query_refusals(merchant):
    for query, code, param in (("limit=101", "invalid_limit", "limit"), ("limit=x", "invalid_limit", "limit"),
                               ("cursor=nope", "invalid_cursor", "cursor"), ("since=1", "unknown_parameter", "since")):
        status, body = await merchant.get(f"/b2b/v1/events?{query}")
        assert (status, body["error"]["code"], body["error"]["param"]) == (422, code, param), query


async def test_an_event_is_served_as_published_not_as_todays_code_would_render_it(stack, merchant, redis, keys):
    """The stored public bytes are what the API serves: rewriting the internal event (what a change of `decide` or
    `evolve` would amount to for a replay) leaves the envelope merchants read as it was delivered."""
    created = await quick(merchant)
    listing = (await merchant.get(f"/b2b/v1/events?order_id={created['order_id']}"))[1]
    first = next(e for e in listing["data"] if e["type"] == "order.created")
    published = (await _published(redis, keys, {first["id"]}))[first["id"]]
    assert first == published
    await stack.pool.execute("UPDATE events SET data = jsonb_set(data, '{amount}', '1') WHERE event_id = $1",
                             first["id"])
    status, again = await merchant.get(f"/b2b/v1/events/{first['id']}")
    assert status == 200 and again == published and again["data"]["amount"] == created["amount_due"]


async def test_an_event_recorded_before_public_bytes_were_kept_is_rendered_by_replay(stack, merchant):
    created = await quick(merchant)
    listing = (await merchant.get(f"/b2b/v1/events?order_id={created['order_id']}"))[1]
    await stack.pool.execute("UPDATE events SET public = NULL WHERE order_id = $1", created["order_id"])
    assert (await merchant.get(f"/b2b/v1/events?order_id={created['order_id']}"))[1] == listing
