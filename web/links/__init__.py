"""Payment links: the merchant's lasting links (B2B API and dashboard) and the buyer's page that makes an order."""
