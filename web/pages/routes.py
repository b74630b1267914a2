"""Every buyer's route on the checkout origin, in one table; none needs credentials."""

from __future__ import annotations

from aiohttp import web

from web.pages import attempts, cards, checkout, files, payment_link, receipt, refund, simulated

ROUTE_DEFS = [
    web.get("/c/{session_key}", checkout.page),
    web.get("/c/{session_key}/status", checkout.status),
    web.post("/c/{session_key}/payment-attempts", attempts.report),
    web.post("/c/{session_key}/card-payments", cards.pay),
    web.post("/c/{session_key}/receipt-email", checkout.receipt_email),
    web.get("/receipts/{receipt_key}", receipt.page),
    web.post("/c/{session_key}/simulated-payments", simulated.simulate),
    web.get("/sdk/{name}", files.sdk),
    web.get("/assets/{name}", files.assets),
    web.get("/refund-request/{token}", refund.form_page),
    web.post("/refund-request/{token}", refund.submit),
    web.post("/refund-request/{token}/renewal", refund.request_renewal),
    web.get(r"/r/{link_token:[A-Za-z0-9_-]+}.json", refund.status_json),
    web.get("/r/{link_token}", refund.status_page),
    web.get("/l/{payment_link_id}", payment_link.page),
    web.post("/l/{payment_link_id}", payment_link.pay),
]
