"""A test-mode key reaches nothing of live mode: no team route, no setting both modes share, no mainnet payment or
refund (docs/api.md, "Test keys and live mode")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accounts import users
from tests.dashboard.support import make_staff
from tests.integration.helpers import order, pay, quick
from web.api import routes

LIVE_ONLY = [route for route in routes.ROUTES if getattr(route.handler, "live_key_only", False)]
BODIES = {"InvitationIn": {"email": "x@evil.test", "role": "owner"}, "StaffRoleIn": {"role": "cashier"}}
SEPOLIA_USDC = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
MAINNET_USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"


async def _written(stack, merchant_id: str) -> tuple:
    """Everything a team or settings route could write for the merchant."""
    return tuple([await stack.pool.fetchval(query, merchant_id) for query in (
        "SELECT count(*) FROM staff_invitations WHERE merchant_id = $1",
        "SELECT count(*) FROM audit_events WHERE merchant_id = $1",
        "SELECT count(*) FROM idempotency_keys WHERE merchant_id = $1",
        "SELECT string_agg(user_id || role || coalesce(removed_at::text, ''), ',' ORDER BY user_id)"
        " FROM staff_users WHERE merchant_id = $1",
        "SELECT settings::text FROM merchants WHERE merchant_id = $1",
    )])


@pytest.fixture
async def shop(stack):
    """A live merchant with an owner, a manager and a pending invitation, and its test key."""
    live = await stack.merchant("Live shop", livemode=True)
    await make_staff(stack, live)
    manager = await make_staff(stack, live, role="manager")
    status, invitation = await live.post(f"/b2b/v1/merchants/{live.merchant_id}/staff/invitations",
                                         {"email": "pending@example.com", "role": "cashier"})
    assert status == 201, invitation
    ids = {"merchant_id": live.merchant_id, "user_id": (await users.find(stack.pool, manager.email)).user_id,
           "invitation_id": invitation["invitation_id"]}
    return live, await stack.other_mode(live, livemode=False), ids


def test_every_team_route_is_live_key_only():
    assert {(r.method, r.path) for r in LIVE_ONLY} >= {
        ("GET", "/merchants/{merchant_id}/staff"), ("POST", "/merchants/{merchant_id}/staff/invitations"),
        ("DELETE", "/merchants/{merchant_id}/staff/invitations/{invitation_id}"),
        ("PATCH", "/merchants/{merchant_id}/staff/{user_id}"), ("DELETE", "/merchants/{merchant_id}/staff/{user_id}")}


def test_docs_list_every_live_key_only_route():
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    section = text.split("## Test keys and live mode", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| (GET|POST|PATCH|DELETE) \| `([^`]+)` \|", section, re.MULTILINE))
    assert {(r.method, r.path) for r in LIVE_ONLY} <= listed


@pytest.mark.parametrize("route", LIVE_ONLY, ids=lambda r: f"{r.method} {r.path}")
async def test_a_test_key_is_refused_every_team_route_and_writes_nothing(stack, shop, route):
    live, test_key, ids = shop
    path = "/b2b/v1" + route.path.format(**ids)
    payload = BODIES.get(route.body.__name__) if route.body else None
    before = await _written(stack, live.merchant_id)
    status, body = await test_key.call(route.method, path, payload, headers={"Idempotency-Key": "k-" + route.method})
    assert (status, body["error"]["code"]) == (403, "live_key_required"), body
    assert await _written(stack, live.merchant_id) == before
    status, _ = await live.call(route.method, path, payload)
    assert status < 400  # the same call with the live key works: the refusal is the key's mode, not the call


@pytest.mark.parametrize(("change", "param"), [
    ({"auto_approve_customer_refunds": True}, "auto_approve_customer_refunds"),
    ({"receive_addresses": {"ethereum": ADDRESS}}, "receive_addresses.ethereum"),
    ({"receive_addresses": {"sepolia": ADDRESS, "tron": None}}, "receive_addresses.tron"),
])
async def test_a_test_key_changes_no_setting_live_mode_reads(stack, shop, change, param):
    live, test_key, _ = shop
    path = f"/b2b/v1/merchants/{live.merchant_id}/settings"
    before = await _written(stack, live.merchant_id)
    status, body = await test_key.patch(path, change)
    assert (status, body["error"]["code"], body["error"]["param"]) == (403, "live_key_required", param)
    assert await _written(stack, live.merchant_id) == before
    assert (await live.patch(path, change))[0] == 200


async def test_a_test_key_sets_the_addresses_of_test_networks(stack, shop):
    live, test_key, _ = shop
    status, body = await test_key.patch(f"/b2b/v1/merchants/{live.merchant_id}/settings",
                                        {"receive_addresses": {"sepolia": ADDRESS}})
    assert (status, body["receive_addresses"]) == (200, {"sepolia": ADDRESS})


async def test_the_test_helper_pays_on_test_networks_only(stack, merchant):
    order_id = (await quick(merchant, amount="5.00"))["order_id"]
    status, body = await pay(merchant, order_id, "5.00", network="ethereum", token_address=MAINNET_USDC)
    assert (status, body["error"]["code"], body["error"]["param"]) == (422, "testnet_required", "network")
    assert (await order(merchant, order_id))["payments"] == []
    status, body = await pay(merchant, order_id, "5.00", network="sepolia", token_address=SEPOLIA_USDC)
    assert (status, body["status"]) == (201, "PAID")


async def test_a_test_mode_refund_is_sent_on_a_test_network_only(stack, merchant):
    order_id = (await quick(merchant, amount="5.00"))["order_id"]
    assert (await pay(merchant, order_id, "5.00"))[0] == 201
    path = f"/b2b/v1/merchants/{merchant.merchant_id}/refunds"
    refund = {"order_id": order_id, "amount": "1.00", "reason": "damaged", "refund_to_address": ADDRESS}
    status, body = await merchant.post(path, {**refund, "refund_network": "ethereum",
                                              "refund_token_address": MAINNET_USDC})
    assert (status, body["error"]["code"], body["error"]["param"]) == (422, "testnet_required", "refund_network")
    assert await stack.pool.fetchval("SELECT count(*) FROM refunds WHERE order_id = $1", order_id) == 0
    status, body = await merchant.post(path, refund)  # the network and token of the payment: sepolia's
    assert (status, body["refund_network"]) == (201, "sepolia"), body
