"""Everything a staff member or a key changes is on record: every mutating route of the B2B API and the dashboard,
read from the app's own route table, names the audit actions its handler records (or, for the few whose effect
another record keeps, says which); a route added without either fails here. The walks below then take each kind
of change the audit log gained through the API and the dashboard and find its row, naming who, the mode and what."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from accounts import audit
from testkit.signed import Signed
from tests.integration.helpers import quick

MUTATING = ("POST", "PUT", "PATCH", "DELETE")


def mutating_routes(app) -> list[tuple[str, str, object]]:
    """(method, path, handler) of every route of the B2B API and the dashboard that changes something or hands out
    the merchant's data in bulk (the exports)."""
    found = []
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if not path.startswith(("/b2b/v1", "/dashboard")):
            continue
        if route.method in MUTATING or "/exports/" in path:
            found.append((route.method, path, route.handler))
    return found


def test_every_mutating_route_names_what_it_records(stack):
    routes = mutating_routes(stack.server.app)
    assert len(routes) > 60  # the table was read, not an empty list
    unmarked = [f"{method} {path}" for method, path, handler in routes
                if not getattr(handler, "audit_actions", None) and not getattr(handler, "audit_exempt", None)]
    assert unmarked == []
    for _method, _path, handler in routes:
        assert set(getattr(handler, "audit_actions", ())) <= set(audit.ACTIONS)


async def _log(client, query: str = "") -> list[dict]:
    status, body = await client.get(f"/b2b/v1/merchants/{client.merchant_id}/audit-events?limit=100{query}")
    assert status == 200, body
    return body["data"]


async def _download(client, path: str) -> int:
    headers = await client.fresh_headers("GET", path, b"")
    async with client.http.get(client.base_url + path, headers=headers) as response:
        await response.read()
        return response.status


async def test_changes_made_with_a_key_are_recorded_and_a_live_reader_sees_both_modes(stack, merchant):
    live = await stack.other_mode(merchant, True)
    base = f"/b2b/v1/merchants/{merchant.merchant_id}"
    await quick(merchant)
    status, endpoint = await merchant.post(f"{base}/webhook-endpoints", {"url": "http://127.0.0.1:9/hooks"})
    assert status == 201, endpoint
    hook = f"{base}/webhook-endpoints/{endpoint['id']}"
    for change in ({"description": "ops"}, {"status": "disabled"}, {"status": "enabled"}):
        assert (await merchant.patch(hook, change))[0] == 200
    status, rolled = await merchant.post(f"{hook}/roll-secret", {})
    assert status == 200
    assert (await merchant.post(f"{hook}/redeliver", {"failed_since": "0001-01-01T00:00:00+05:00"}))[0] == 202
    assert (await merchant.call("DELETE", hook))[0] == 200
    status, link = await merchant.post(f"{base}/payment-links", {"name": "Tea", "amount": "3.00"})
    assert status == 201
    for change in ({"name": "Green tea"}, {"status": "archived"}, {"status": "active"}):
        assert (await merchant.patch(f"{base}/payment-links/{link['payment_link_id']}", change))[0] == 200
    assert await _download(merchant, f"{base}/exports/orders?format=jsonl&from=2020-01-01") == 200
    # The team is the account's, not a mode's: changed with the live key.
    status, invitation = await live.post(f"{base}/staff/invitations", {"email": "temp@example.com", "role": "cashier"})
    assert status == 201
    assert (await live.call("DELETE", f"{base}/staff/invitations/{invitation['invitation_id']}"))[0] == 200
    status, live_link = await live.post(f"{base}/payment-links", {"name": "Live tea", "amount": "3.00"})
    assert status == 201

    everything = await _log(live)
    by_action = {}
    for event in everything:
        by_action.setdefault(event["action"], []).append(event)
    test_key = {"type": "api_key", "actor_id": merchant.public_key, "id": merchant.public_key, "email": None}
    for action in ("webhook_endpoint.created", "webhook_endpoint.updated", "webhook_endpoint.disabled",
                   "webhook_endpoint.enabled", "webhook_endpoint.secret_rolled", "webhook_endpoint.redelivered",
                   "webhook_endpoint.deleted", "payment_link.updated", "payment_link.archived",
                   "payment_link.activated", "export.downloaded"):
        [event] = by_action[action]
        assert (event["actor"], event["livemode"]) == (test_key, False), event
    for action in ("staff.invited", "staff.invitation_revoked"):
        [event] = by_action[action]
        assert (event["actor"]["actor_id"], event["livemode"]) == (live.public_key, True), event
    assert by_action["webhook_endpoint.updated"][0]["details"] == {"changed": {"description": "ops"}}
    assert by_action["webhook_endpoint.created"][0]["details"]["url"] == "http://127.0.0.1:9/hooks"
    raw = str(await stack.pool.fetch("SELECT * FROM audit_events WHERE merchant_id = $1", merchant.merchant_id))
    assert endpoint["secret"] not in raw and rolled["secret"] not in raw
    assert by_action["webhook_endpoint.redelivered"][0]["details"]["failed_since"] == "2000-01-01T00:00:00Z"
    exported = by_action["export.downloaded"][0]["details"]
    assert exported == {"kind": "orders", "from": "2020-01-01T00:00:00Z", "to": None, "format": "jsonl",
                        "filters": {}, "rows": 1, "complete": True}
    assert by_action["staff.invitation_revoked"][0]["details"] == {"email": "temp@example.com", "role": "cashier"}
    # Each mode's payment link, and the live reader sees both, each naming its mode.
    created = {e["object_id"]: e["livemode"] for e in by_action["payment_link.created"]}
    assert created == {link["payment_link_id"]: False, live_link["payment_link_id"]: True}
    # A test key reads its own mode's rows and the account's, never the live mode's.
    seen_by_test = {e["id"] for e in await _log(merchant)}
    assert seen_by_test == {e["id"] for e in everything if e["livemode"] is not True}
    assert len(seen_by_test) == len(everything) - 3


def _service(stack, *args: str) -> dict:
    env = dict(os.environ, DATABASE_URL=stack.settings.database_url, SERVICE_MASTER_KEY=stack.settings.master_key)
    run = subprocess.run([sys.executable, "-m", "service", *args, "--json"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


async def test_keys_made_and_rolled_on_the_server_are_on_record_as_the_operators(stack, merchant):
    live = _service(stack, "keys", "create", merchant.merchant_id, "--live")
    rolled = _service(stack, "keys", "roll", merchant.merchant_id)
    reader = Signed(stack.http, stack.base_url, live["public_key"], live["secret_key"], merchant.merchant_id)
    found = {(e["action"], e["object_id"]): e for e in await _log(reader)}
    made = found[("api_key.created", live["public_key"])]
    assert (made["actor"]["type"], made["actor"]["actor_id"], made["livemode"]) == ("operator", "service keys create", True)
    assert found[("api_key.rolled", rolled["public_key"])]["livemode"] is False
