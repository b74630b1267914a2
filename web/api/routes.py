"""Every B2B route in one table: the router and the OpenAPI document are both built from it."""

from __future__ import annotations

from aiohttp import web

from contract import api as contract
from web.api import bodies
from web.api.handlers import (
                              audit_events,
                              exports,
                              merchants,
                              orders,
                              payment_links,
                              refund_requests,
                              refund_transactions,
                              refunds,
                              settings,
                              staff,
                              testmode,
                              webhooks,
)
from web.api.route import Route
from web.reads import order_filters

PREFIX = "/b2b/v1"


ROUTES: list[Route] = [
    Route("POST", "/checkout-sessions/quick", orders.quick_session,
          "Create an order and its checkout session in one transaction", bodies.QuickSessionIn, 201, one_command=True, response=contract.SessionCreated),
    Route("POST", "/checkout-sessions", orders.open_session,
          "Attach a fresh session to an existing order (retry, or a residual with amount_due)", bodies.SessionIn, 201,
          one_command=True, response=contract.SessionCreated),
    Route("POST", "/orders", orders.create_order, "Create an order without a session", bodies.OrderIn, 201,
          one_command=True, response=contract.Order),
    Route("GET", "/orders", orders.list_orders,
          "List orders, newest first, with cursor pagination; filter by status, creation and paid time",
          response=orders.ORDER_LIST, query=("limit", "cursor", *order_filters.NAMES)),
    Route("GET", "/orders/{order_id}", orders.get_order, "Read an order with line items, payments and sessions", response=contract.Order),
    Route("PATCH", "/orders/{order_id}/cancel", orders.cancel_order, "Cancel an unpaid order", bodies.OrderCancelIn,
          one_command=True, response=contract.Order),
    Route("PATCH", "/orders/{order_id}/reopen", orders.reopen_order,
          "Reopen an order canceled by payment_timeout, with a new session", bodies.ReopenIn, one_command=True, response=contract.SessionCreated),
    Route("GET", "/merchants/{merchant_id}", merchants.get_merchant, "Read the calling merchant", response=contract.Merchant),
    *refunds.ROUTES,
    *refund_transactions.ROUTES,
    *refund_requests.ROUTES,
    *settings.ROUTES,
    *testmode.ROUTES,
    *webhooks.ROUTES,
    *staff.ROUTES,
    *audit_events.ROUTES,
    *exports.ROUTES,
    *payment_links.ROUTES,
]


# The spec names these state changes (approve, reject, cancel, reopen) but not always their method: each
# answers POST and PATCH alike, so an integration guessing either one works (docs/api.md).
ACTIONS = ("/approve", "/reject", "/cancel", "/reopen")
OTHER_METHOD = {"POST": "PATCH", "PATCH": "POST"}
ROUTES += [route._replace(method=OTHER_METHOD[route.method]) for route in ROUTES if route.path.endswith(ACTIONS)]


# A GET answers HEAD too, with its headers alone.
ROUTE_DEFS = [web.get(PREFIX + route.path, route.handler) if route.method == "GET"
              else web.route(route.method, PREFIX + route.path, route.handler) for route in ROUTES]
# The handlers whose signature is spent with their command (web/api/route.py).
ONE_COMMAND_HANDLERS = frozenset(route.handler for route in ROUTES if route.one_command)
