"""Where the dashboard lives: its prefix and origin from DASHBOARD_URL, and whether its cookies need HTTPS."""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from common.config import Settings

DEFAULT_PREFIX = "/dashboard"
MODES = ("test", "live")
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}
TOKEN_TTL_S = 86400  # docs/spec.md §8: refund-request tokens minted from the dashboard live 24 hours


def _url(settings: Settings) -> str:
    return settings.dashboard_url or settings.public_base()


def prefix(settings: Settings) -> str:
    """DASHBOARD_URL's path (https://ops.example.com/admin serves at /admin), else /dashboard."""
    path = urlsplit(_url(settings)).path.rstrip("/")
    return path or DEFAULT_PREFIX


def dashboard_url(settings: Settings) -> str:
    """Where staff sign in: DASHBOARD_URL's origin and path, else the public origin under the prefix."""
    parts = urlsplit(_url(settings))
    return f"{parts.scheme}://{parts.netloc}{prefix(settings)}"


def secure_cookies(settings: Settings) -> bool:
    """Secure everywhere but plain-HTTP local development, where a browser would never send a Secure cookie."""
    parts = urlsplit(_url(settings))
    return not (parts.scheme == "http" and parts.hostname in LOCAL_HOSTS)


def origin(settings: Settings, request: web.Request) -> str:
    """The origin forms must come from: DASHBOARD_URL's when configured (a proxy may hide the scheme from us)."""
    if settings.dashboard_url:
        parts = urlsplit(settings.dashboard_url)
        return f"{parts.scheme}://{parts.netloc}"
    return f"{request.scheme}://{request.host}"
