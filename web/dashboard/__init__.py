"""The merchant dashboard and the merchant app: server-rendered pages for a merchant's staff, on the same app as the
API."""
