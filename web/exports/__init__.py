"""Accounting exports: orders, payments and refunds of a time range, streamed as CSV or JSON Lines."""
