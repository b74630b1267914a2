"""Hosted buyer pages on the checkout origin: the checkout page, its JSON endpoints and the SDK builds."""

from __future__ import annotations

from aiohttp import web

from web.pages import attempts, cards, checkout, files, receipt, simulated


def add_routes(app: web.Application) -> None:
    app.router.add_get("/c/{session_key}", checkout.page)
    app.router.add_get("/c/{session_key}/status", checkout.status)
    app.router.add_post("/c/{session_key}/payment-attempts", attempts.report)
    app.router.add_post("/c/{session_key}/card-payments", cards.pay)
    app.router.add_post("/c/{session_key}/receipt-email", checkout.receipt_email)
    app.router.add_get("/receipts/{receipt_key}", receipt.page)
    app.router.add_post("/c/{session_key}/simulated-payments", simulated.simulate)
    app.router.add_get("/sdk/{name}", files.sdk)
    app.router.add_get("/assets/{name}", files.assets)
