"""The merchant dashboard: server-rendered pages for a merchant's staff, on the same app as the API."""

from web.dashboard.routes import add_routes

__all__ = ["add_routes"]
