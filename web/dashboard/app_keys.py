"""The dashboard's app and request keys: its mount prefix, the signed-in staff session, a message to show once."""

from __future__ import annotations

from aiohttp import web

from web.edge.staff_sessions import Session

PREFIX: web.AppKey[str] = web.AppKey("dashboard_prefix", str)
SECURE: web.AppKey[bool] = web.AppKey("dashboard_secure_cookies", bool)
STAFF: web.RequestKey[Session] = web.RequestKey("dashboard_staff", Session)
FLASH: web.RequestKey[str] = web.RequestKey("dashboard_flash", str)
UNREAD: web.RequestKey[int] = web.RequestKey("dashboard_unread", int)  # the bell's count on a page
TEAMS: web.RequestKey[list] = web.RequestKey("dashboard_teams", list)  # list[Membership]: the merchant switcher
