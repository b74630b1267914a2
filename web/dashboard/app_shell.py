"""The merchant app's shell at {prefix}/app: the page, its web app manifest and its service worker. None of them
holds a user's data, so a cached copy can start the app offline without showing anything stale."""

from __future__ import annotations

import json

from aiohttp import web

from accounts import users
from accounts.roles import Can, allows
from web import i18n
from web.dashboard import app_keys
from web.dashboard.guard import signed_in
from web.dashboard.html import render
from web.dashboard.signin import landing_mode
from web.edge.app_state import ctx
from web.i18n import Translator
from web.pages.files import ASSETS, serve

THEME = "#0f5132"
ICON_SIZES = (192, 512)
# What the app's script says after load; the rest is rendered into the shell.
SCRIPT_MESSAGES = ("app_charge", "app_scan", "app_networks", "app_waiting", "app_confirming", "app_paid",
                   "app_underpaid", "app_expired", "app_canceled", "app_total", "app_no_sales", "app_error",
                   "app_offline", "app_signed_out", "app_wrong_pin", "app_underpaid_short", "app_refunded",
                   "app_partly_refunded")


def _app(request: web.Request) -> str:
    return f"{request.app[app_keys.PREFIX]}/app"


def _scope(request: web.Request) -> str:
    """The whole dashboard: its refund dialog, review queue and execution screen open inside the installed app."""
    return f"{request.app[app_keys.PREFIX]}/"


async def page(request: web.Request) -> web.Response:
    t = Translator(i18n.choose(request.query.get("locale"), request.headers.get("Accept-Language")))
    app = _app(request)
    response = render(request, "app.html", t=t, app=app, theme=THEME, config={
        "app": app, "prefix": request.app[app_keys.PREFIX], "scope": _scope(request), "worker": f"{app}/sw.js",
        "locale": t.locale, "messages": t.subset(SCRIPT_MESSAGES)})
    # The manifest is fetched under the page's CSP, whose default-src is 'none'; the camera reads a buyer's QR.
    response.headers["Content-Security-Policy"] += "; manifest-src 'self'"
    response.headers["Permissions-Policy"] = "camera=(self), microphone=(), geolocation=()"
    return response


async def manifest(request: web.Request) -> web.Response:
    app = _app(request)
    body = {
        "name": "Counter", "short_name": "Counter", "id": app, "start_url": app, "scope": _scope(request),
        "display": "standalone", "orientation": "any", "theme_color": THEME, "background_color": "#ffffff",
        "icons": [{"src": f"/assets/app-icon-{size}.png", "sizes": f"{size}x{size}", "type": "image/png",
                   "purpose": "any maskable"} for size in ICON_SIZES],
    }
    return web.Response(text=json.dumps(body), content_type="application/manifest+json",
                        headers={"Cache-Control": "no-cache"})


async def worker(request: web.Request) -> web.FileResponse:
    # A worker's scope may not reach above its own folder ({prefix}/app/) unless the server allows it.
    return serve(ASSETS, "app-sw.js", {"Cache-Control": "no-cache", "Service-Worker-Allowed": _scope(request)})


@signed_in(Can.SIGN_OUT, json=True, while_locked=True)
async def me(request: web.Request) -> web.Response:
    """Who is signed in on this device, what they may do, whether it is locked, and the CSRF token the app's
    requests carry (a locked session may only unlock or sign out with it)."""
    staff = request[app_keys.STAFF]
    answer = web.json_response({
        "email": staff.email, "merchant_name": staff.merchant_name, "role": staff.role, "csrf": staff.csrf_token,
        "locked": staff.locked, "pin": await users.has_pin(ctx(request).pool, staff.user_id),
        "mode": await landing_mode(ctx(request).pool, staff.merchant_id),
        "can": {can.value: allows(staff.role, can) for can in Can},
        "merchants": [{"user_id": team.user_id, "merchant_name": team.merchant_name, "role": team.role,
                       "current": team.user_id == staff.user_id}
                      for team in await users.memberships(ctx(request).pool, staff.user_id)],
    })
    answer.headers["Cache-Control"] = "no-store"
    return answer
