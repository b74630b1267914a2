"""What a hosted page's own forms post: JSON from the page's script or a plain form without it, from its origin."""

from __future__ import annotations

from typing import TypeVar

from aiohttp import web

from web.edge import decoding
from web.edge.errors import ApiError

T = TypeVar("T")


async def posted(request: web.Request, kind: type[T]) -> T:
    """A JSON body (the page's script) or an ordinary form post (no script)."""
    if wants_json(request):
        return decoding.decode(await request.read(), kind)
    return decoding.convert({k: v for k, v in (await decoding.posted_form(request)).items() if v != ""}, kind)


def wants_json(request: web.Request) -> bool:
    return request.content_type == "application/json"


def same_origin(request: web.Request) -> None:
    """A browser names the page a form was posted from: only the page's own origin may post it."""
    origin = request.headers.get("Origin")
    if origin is not None and origin != f"{request.scheme}://{request.host}":
        raise ApiError(403, "cross_origin_refused", "This form only accepts submissions from its own page.")
