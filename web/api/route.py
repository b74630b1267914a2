"""A B2B route: method, path under /b2b/v1, handler, summary, request body and answer (for OpenAPI)."""

from __future__ import annotations

from typing import Awaitable, Callable, NamedTuple

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Route(NamedTuple):
    method: str
    path: str
    handler: Handler
    summary: str
    body: type | None = None
    status: int = 200
    # The handler's only effect is the one command it submits: the request's signature is spent together
    # with that command, in one Redis call, instead of in a call of its own before the handler runs.
    one_command: bool = False
    response: type | None = None  # its answer's shape (contract/api.py), for the OpenAPI document
    query: tuple[str, ...] = ()  # query parameters documented in the OpenAPI document
    streamed: bool = False  # a file download: CSV, or JSON Lines of `response` (web/api/handlers/exports.py)
