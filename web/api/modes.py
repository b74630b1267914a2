"""What a test-mode API key may not reach: live mode (docs/api.md, "Test keys and live mode").

Test keys sit in CI systems and staging configurations, so a test key manages nothing whose effect crosses into
live mode: the team (a live owner could be invited with one), the settings shared by both modes, and networks
that carry real money. The dashboard acts for a signed-in staff member, whose role decides, not for a key."""

from __future__ import annotations

import functools

from aiohttp import web

from chain_watchers import Network
from web.api.audit_trail import STAFF_ACTOR
from web.api.route import Handler
from web.edge.app_state import caller
from web.edge.errors import ApiError


def test_key(request: web.Request) -> bool:
    """A B2B request signed with a test-mode key (a dashboard page of test mode is a staff member, not a key)."""
    return request.get(STAFF_ACTOR) is None and not caller(request).livemode


def require_live_key(request: web.Request, param: str | None = None) -> None:
    if test_key(request):
        what = f"`{param}` reaches" if param else "This call reaches"
        raise ApiError(403, "live_key_required",
                       f"{what} live mode, which a test-mode key never changes: use the live key.", param)


def live_key_only(handler: Handler) -> Handler:
    """A route that answers a test key 403 `live_key_required` before it reads its body or writes anything."""

    @functools.wraps(handler)
    async def checked(request: web.Request) -> web.StreamResponse:
        require_live_key(request)
        return await handler(request)

    checked.live_key_only = True  # the route table's tests and docs/api.md list these
    return checked


def require_testnet(livemode: bool, net: Network, param: str) -> None:
    """Test mode moves no real money: its payments and refunds are on networks marked `testnet` only."""
    if not livemode and not net.testnet:
        raise ApiError(422, "testnet_required",
                       f"`{param}` {net.slug!r} is a live network: test mode pays and refunds on test networks only.",
                       param)
