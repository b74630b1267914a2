"""Every operation of the B2B API, one entry each: the client's methods are made from this table, and a test
fails when the service's OpenAPI document has an operation that is missing here. Adding an operation is adding
a row: `Op(resource, method name, HTTP method, path, answer model)`. A file download (`streams`) answers a
`Download` of rows of its model instead of one JSON object."""

from __future__ import annotations

from typing import NamedTuple

from . import models as m

PREFIX = "/b2b/v1"
M = PREFIX + "/merchants/{merchant_id}"
WE = M + "/webhook-endpoints/{webhook_endpoint_id}"
# Path parameters by an earlier name, still taken by keyword for one version: `endpoint_id=` is `webhook_endpoint_id=`.
RENAMED_PARAMS = {"endpoint_id": "webhook_endpoint_id"}
STAFF = M + "/staff"
PL = M + "/payment-links"


class Op(NamedTuple):
    resource: str           # client.<resource>
    name: str               # client.<resource>.<name>(...)
    method: str             # the HTTP method this library sends
    path: str               # path parameters in braces; {merchant_id} defaults to the client's merchant
    returns: type[m.ApiObject] = m.ApiObject
    pages: bool = False     # a list: the method walks every page lazily
    aliases: tuple[str, ...] = ()  # other HTTP methods the service accepts for the same operation
    streams: bool = False   # a CSV or JSON Lines file of `returns` rows, streamed to the caller (downloads.py)

    @property
    def writes(self) -> bool:
        return self.method in ("POST", "PATCH", "DELETE")


OPERATIONS: tuple[Op, ...] = (
    Op("checkout_sessions", "create_quick", "POST", PREFIX + "/checkout-sessions/quick", m.QuickSession),
    Op("checkout_sessions", "create", "POST", PREFIX + "/checkout-sessions", m.QuickSession),
    Op("orders", "create", "POST", PREFIX + "/orders", m.Order),
    Op("orders", "list", "GET", PREFIX + "/orders", m.Order, pages=True),
    Op("orders", "retrieve", "GET", PREFIX + "/orders/{order_id}", m.Order),
    Op("orders", "cancel", "PATCH", PREFIX + "/orders/{order_id}/cancel", m.Order, aliases=("POST",)),
    Op("orders", "reopen", "PATCH", PREFIX + "/orders/{order_id}/reopen", m.Order, aliases=("POST",)),
    Op("orders", "list_refunds", "GET", PREFIX + "/orders/{order_id}/refunds", m.Refund, pages=True),
    Op("refunds", "create", "POST", M + "/refunds", m.Refund),
    Op("refunds", "retrieve", "GET", PREFIX + "/refunds/{refund_id}", m.Refund),
    Op("refunds", "approve", "POST", PREFIX + "/refunds/{refund_id}/approve", m.Refund, aliases=("PATCH",)),
    Op("refunds", "reject", "POST", PREFIX + "/refunds/{refund_id}/reject", m.Refund, aliases=("PATCH",)),
    Op("refunds", "cancel", "POST", PREFIX + "/refunds/{refund_id}/cancel", m.Refund, aliases=("PATCH",)),
    Op("refunds", "retry", "POST", PREFIX + "/refunds/{refund_id}/retry", m.Refund),
    Op("refunds", "submit_tx", "POST", PREFIX + "/refunds/{refund_id}/submit-tx", m.Refund),
    Op("customer_refunds", "create", "POST", M + "/customer-refunds", m.Refund),
    Op("refund_requests", "create", "POST", M + "/refund-requests", m.RefundRequest),
    Op("refund_requests", "retrieve", "GET", PREFIX + "/refund-requests/{token}", m.RefundRequest),
    Op("refund_requests", "cancel", "POST", PREFIX + "/refund-requests/{token}/cancel", m.RefundRequest,
       aliases=("PATCH",)),
    Op("refund_requests", "approve_renewal", "POST", PREFIX + "/refund-requests/{token}/renewal/approve",
       m.RefundRequest, aliases=("PATCH",)),
    Op("merchants", "retrieve", "GET", M, m.Merchant),
    Op("settings", "retrieve", "GET", M + "/settings", m.MerchantSettings),
    Op("settings", "update", "PATCH", M + "/settings", m.MerchantSettings),
    Op("webhook_endpoints", "create", "POST", M + "/webhook-endpoints", m.WebhookEndpoint),
    Op("webhook_endpoints", "list", "GET", M + "/webhook-endpoints", m.WebhookEndpoint, pages=True),
    Op("webhook_endpoints", "retrieve", "GET", WE, m.WebhookEndpoint),
    Op("webhook_endpoints", "update", "PATCH", WE, m.WebhookEndpoint),
    Op("webhook_endpoints", "delete", "DELETE", WE, m.ApiObject),
    Op("webhook_endpoints", "roll_secret", "POST", WE + "/roll-secret", m.WebhookEndpoint),
    Op("webhook_endpoints", "redeliver", "POST", WE + "/redeliver", m.Redelivery),
    Op("webhook_deliveries", "list", "GET", M + "/webhook-deliveries", m.WebhookDelivery, pages=True),
    Op("webhook_deliveries", "retrieve", "GET", M + "/webhook-deliveries/{delivery_id}", m.WebhookDelivery),
    Op("events", "list", "GET", PREFIX + "/events", m.Event, pages=True),
    Op("events", "retrieve", "GET", PREFIX + "/events/{event_id}", m.Event),
    Op("staff", "list", "GET", STAFF, m.StaffMember, pages=True),
    Op("staff", "create_invitation", "POST", STAFF + "/invitations", m.InvitationCreated),
    Op("staff", "revoke_invitation", "DELETE", STAFF + "/invitations/{invitation_id}", m.InvitationRevoked),
    Op("staff", "update", "PATCH", STAFF + "/{user_id}", m.StaffMember),
    Op("staff", "remove", "DELETE", STAFF + "/{user_id}", m.StaffMemberRemoved),
    Op("audit_events", "list", "GET", M + "/audit-events", m.AuditEvent, pages=True),
    Op("payment_links", "create", "POST", PL, m.PaymentLink),
    Op("payment_links", "list", "GET", PL, m.PaymentLink, pages=True),
    Op("payment_links", "retrieve", "GET", PL + "/{payment_link_id}", m.PaymentLink),
    Op("payment_links", "update", "PATCH", PL + "/{payment_link_id}", m.PaymentLink),
    Op("exports", "orders", "GET", M + "/exports/orders", m.OrderExportRow, streams=True),
    Op("exports", "payments", "GET", M + "/exports/payments", m.PaymentExportRow, streams=True),
    Op("exports", "refunds", "GET", M + "/exports/refunds", m.RefundExportRow, streams=True),
    # Test mode only: what a buyer's payment and a refund's confirmations would do.
    Op("test_helpers", "simulate_payment", "POST", PREFIX + "/test-helpers/orders/{order_id}/payments", m.Order),
    Op("test_helpers", "execute_refund", "POST", PREFIX + "/test-helpers/refunds/{refund_id}/execute", m.Refund),
)


def covered() -> set[tuple[str, str]]:
    """(HTTP method, path) of every operation the table serves, aliases included."""
    return {(method, op.path) for op in OPERATIONS for method in (op.method, *op.aliases)}
