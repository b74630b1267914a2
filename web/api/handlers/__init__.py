"""Handlers of the B2B API, one module per resource."""
