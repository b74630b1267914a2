"""Jinja2 rendering of the hosted pages, with the security headers every one of them carries."""

from __future__ import annotations

from pathlib import Path

import jinja2
from aiohttp import web

from common.network_names import network_name
from web.i18n import Translator

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).resolve().parent.parent / "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["network_name"] = network_name  # a network as people know it: {{ slug|network_name }}

# Scripts, styles and requests only from this origin: no inline script can run even if a value slipped
# through escaping. frame-ancestors is open because merchants embed the pages from origins we do not list.
CSP = "; ".join([
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors *",
])
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    # The URL carries the session key: never hand it to the next site in a Referer.
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


def csp_with(**origins: tuple[str, ...]) -> str:
    """The pages' policy, widened only by the origins named per directive (the card provider's script, frames
    and API on a page that takes cards)."""
    extra = {f"{name.replace('_', '-')}": " ".join(values) for name, values in origins.items() if values}
    rules = []
    for rule in CSP.split("; "):
        name = rule.split(" ")[0]
        rules.append(f"{rule} {extra.pop(name)}" if name in extra else rule)
    return "; ".join(rules + [f"{name} {values}" for name, values in extra.items()])


def render(name: str, t: Translator, config: dict, code: int = 200, csp: str = CSP, **values) -> web.Response:
    """`config` reaches the page's scripts as JSON in a non-executable script element."""
    text = _env.get_template(name).render(t=t, config=config, **values)
    return web.Response(text=text, status=code, content_type="text/html",
                        headers={**PAGE_HEADERS, "Content-Security-Policy": csp})
