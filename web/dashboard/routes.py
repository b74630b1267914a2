"""The dashboard's routes under its prefix; `{mode}` (test or live) picks which of the merchant's data is seen."""

from __future__ import annotations

from aiohttp import web

from web.dashboard import (
    app_keys,
    app_shell,
    audit,
    exports,
    invite,
    issue_refund,
    links,
    lock,
    notifications,
    orders,
    refund_execution,
    review,
    sales,
    settings,
    signin,
    team,
    webhooks,
)
from web.dashboard.html import error_page, render
from web.edge import dashboard_site
from web.edge.app_state import ctx

MODE = "/{mode:test|live}"


async def home(request: web.Request) -> web.Response:
    raise web.HTTPSeeOther(f"{request.app[app_keys.PREFIX]}/signin")


async def front_door(request: web.Request) -> web.Response:
    """GET / on the service's own address (the start-up log names it): a page that sends a merchant on to sign in
    and tells a buyer or a developer where they belong, not a bare 404."""
    settings = ctx(request).settings
    # Here, unless DASHBOARD_URL puts the dashboard on an origin of its own.
    dashboard = dashboard_site.dashboard_url(settings) if settings.dashboard_url else request.app[app_keys.PREFIX]
    return render(request, "home.html", signin=f"{dashboard}/signin")


async def not_found(request: web.Request) -> web.Response:
    return error_page(request, 404, "There is no such page in the dashboard.")


ROUTES = [
    ("GET", "", home),
    ("GET", "/", home),
    ("GET", "/signin", signin.signin_page),
    ("POST", "/signin", signin.signin),
    ("POST", "/signout", signin.signout),
    ("POST", "/switch", signin.switch),
    ("GET", "/invite/{token}", invite.invite_page),
    ("POST", "/invite/{token}", invite.accept),
    ("GET", "/team", team.team_page),
    ("POST", "/team/invitations", team.invite),
    ("POST", "/team/invitations/{invitation_id}/revoke", team.revoke),
    ("POST", "/team/{user_id}/role", team.change_role),
    ("POST", "/team/{user_id}/remove", team.remove),
    ("GET", "/audit", audit.audit_page),
    ("GET", "/app", app_shell.page),
    ("GET", "/app/manifest.webmanifest", app_shell.manifest),
    ("GET", "/app/sw.js", app_shell.worker),
    ("GET", "/app/me", app_shell.me),
    ("POST", "/app/pin", lock.set_pin),
    ("POST", "/app/lock", lock.lock),
    ("POST", "/app/unlock", lock.unlock),
    ("GET", "/app/notifications", notifications.app_list),
    ("POST", "/app/notifications/read", notifications.app_read),
    ("GET", MODE + "/notifications", notifications.page),
    ("POST", MODE + "/notifications/read", notifications.read),
    ("POST", MODE + "/notifications/choices", notifications.choose),
    ("POST", MODE + "/app/sales", sales.sell),
    ("GET", MODE + "/app/sales", sales.todays_sales),
    ("GET", MODE + "/app/sales/{order_id}", sales.sale),
    ("GET", MODE + "/orders", orders.orders_list),
    ("GET", MODE + "/orders/{order_id}", orders.order),
    ("GET", MODE + "/exports/orders", exports.orders),
    ("GET", MODE + "/exports/payments", exports.payments),
    ("GET", MODE + "/exports/refunds", exports.refunds),
    ("GET", MODE + "/orders/{order_id}/refund", issue_refund.dialog),
    ("POST", MODE + "/orders/{order_id}/refund", issue_refund.issue),
    ("GET", MODE + "/refund-requests/{token}", issue_refund.minted_link),
    ("POST", MODE + "/refund-requests/{token}/cancel", review.cancel_token),
    ("POST", MODE + "/refund-requests/{token}/renewal/approve", review.approve_renewal),
    ("GET", MODE + "/refunds/{refund_id}", refund_execution.refund_screen),
    ("GET", MODE + "/refunds/{refund_id}/progress", refund_execution.refund_progress),
    ("POST", MODE + "/refunds/{refund_id}/submit-tx", refund_execution.submit_tx),
    ("POST", MODE + "/refunds/{refund_id}/approve", refund_execution.approve),
    ("POST", MODE + "/refunds/{refund_id}/reject", refund_execution.reject),
    ("POST", MODE + "/refunds/{refund_id}/retry", refund_execution.retry),
    ("POST", MODE + "/settings/card", settings.connect_card),
    ("POST", MODE + "/settings/card/disconnect", settings.disconnect_card),
    ("GET", MODE + "/review", review.queues),
    ("GET", MODE + "/settings", settings.settings_page),
    ("POST", MODE + "/settings/refunds", settings.save_refunds),
    ("POST", MODE + "/settings/addresses", settings.save_addresses),
    ("POST", MODE + "/settings/api-key", settings.roll_key),
    ("POST", MODE + "/webhooks", webhooks.add),
    ("POST", MODE + "/webhooks/{endpoint_id}/disable", webhooks.disable),
    ("POST", MODE + "/webhooks/{endpoint_id}/enable", webhooks.enable),
    ("POST", MODE + "/webhooks/{endpoint_id}/delete", webhooks.delete),
    ("POST", MODE + "/webhooks/{endpoint_id}/roll-secret", webhooks.roll_secret),
    ("POST", MODE + "/webhooks/{endpoint_id}/test", webhooks.send_test),
    ("POST", MODE + "/webhooks/{endpoint_id}/redeliver", webhooks.redeliver),
    ("GET", MODE + "/payment-links", links.links_page),
    ("POST", MODE + "/payment-links", links.create),
    ("POST", MODE + "/payment-links/{payment_link_id}/archive", links.archive),
    ("POST", MODE + "/payment-links/{payment_link_id}/activate", links.activate),
    ("GET", "/{tail:.*}", not_found),
]


def route_defs(prefix: str) -> list[web.RouteDef]:
    """The dashboard mounted at `prefix` (DASHBOARD_URL's path), its pages answering GET alone, and the service's
    front door."""
    return [*(web.get(prefix + path, handler, allow_head=False) if method == "GET"
              else web.route(method, prefix + path, handler) for method, path, handler in ROUTES),
            web.get("/", front_door)]
