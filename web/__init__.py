"""The aiohttp web layer: signed B2B API, hosted pages, OpenAPI document."""
