"""The aiohttp web layer in floors, top-down: app, dashboard, buyers' pages, signed API, exports, reads, edge."""
