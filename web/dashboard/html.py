"""Dashboard pages through the hosted pages' Jinja2 renderer, with framing forbidden on top of their CSP."""

from __future__ import annotations

from aiohttp import web

from accounts.roles import Can, allows
from web.dashboard import app_keys
from web.edge.errors import ApiError
from web.i18n import Translator
from web.pages.templating import CSP, PAGE_HEADERS
from web.pages.templating import render as render_page

_ENGLISH = Translator("en")  # the dashboard speaks English; the hosted pages' translator is only passed through
# Merchants frame the hosted pages, so their CSP allows any ancestor. Nobody frames the dashboard: a framed
# "Approve" button is a clickjacking target.
_CSP = "; ".join("frame-ancestors 'none'" if part.startswith("frame-ancestors") else part for part in CSP.split("; "))
# same-origin, not no-referrer: under no-referrer a browser posts forms with `Origin: null`, which the CSRF check
# must refuse. Other sites (explorers, the checkout origin) still get no referrer.
HEADERS = {**PAGE_HEADERS, "Content-Security-Policy": _CSP, "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"}


# The top bar's sections, each shown to the roles that may open it (the routes refuse the others all the same).
SECTIONS = (("orders", "Orders", Can.SEE_ORDERS), ("review", "Review", Can.REFUND),
            ("payment-links", "Payment links", Can.SHARE_LINKS), ("settings", "Settings", Can.CONFIGURE),
            ("team", "Team", Can.MANAGE_TEAM), ("audit", "Audit log", Can.MANAGE_TEAM))
MODELESS = frozenset({"team", "audit"})  # the merchant's whole team and log: at {prefix}/team, not under a mode


def render(request: web.Request, name: str, code: int = 200, config: dict | None = None, t: Translator = _ENGLISH,
           **values) -> web.Response:
    """`config` reaches the page's scripts as JSON (the CSP runs no inline script); the merchant app passes `t`."""
    staff = request.get(app_keys.STAFF)
    mode = request.match_info.get("mode", "test")
    prefix = request.app[app_keys.PREFIX]
    response = render_page(
        f"dashboard/{name}", t, config or {}, code=code, prefix=prefix, mode=mode, base=f"{prefix}/{mode}",
        livemode=mode == "live", staff=staff,
        sections=[(key, label, prefix if key in MODELESS else f"{prefix}/{mode}") for key, label, needs in SECTIONS
                  if staff and allows(staff.role, needs)], modeless=MODELESS, csrf=staff.csrf_token if staff else None,
        flash=request.get(app_keys.FLASH), unread=request.get(app_keys.UNREAD, 0),
        teams=request.get(app_keys.TEAMS, []),
        path=request.path, **values,
    )
    response.headers.update(HEADERS)
    return response


def problem(error: ApiError | None) -> dict | None:
    """An API refusal as a form shows it: the message (without the API's `code` quotes) and the field it names."""
    return {"param": error.param or "", "message": error.message.replace("`", "")} if error else None


def error_page(request: web.Request, code: int, message: str) -> web.Response:
    titles = {403: "Not allowed", 404: "Not found", 423: "Locked", 429: "Too many attempts"}
    return render(request, "error.html", code=code, status_code=code, title=titles.get(code, "Something went wrong"),
                  message=message)
