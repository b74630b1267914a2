"""Posted forms, read in one place: a form's fields, its text fields, or a struct from the page's JSON or its form;
and the origin a hosted page's form may be posted from."""

from __future__ import annotations

from typing import TypeVar

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import MultiDictProxy

from web.edge import decoding
from web.edge.errors import ApiError

T = TypeVar("T")


async def fields(request: web.Request) -> MultiDictProxy:
    """A posted form's fields; a body that is no form (bytes that are not UTF-8, a broken multipart) is a 400."""
    try:
        return await request.post()
    except (UnicodeDecodeError, ValueError, HttpProcessingError):
        raise ApiError(400, "invalid_form", "The request body is not a well-formed UTF-8 form.") from None


async def form(request: web.Request) -> dict[str, str]:
    """The posted form's text fields; empty ones are left out (an empty field means "not given")."""
    posted = await fields(request)
    return {k: v.strip() for k, v in posted.items() if isinstance(v, str) and v.strip() and k != "csrf"}


async def posted(request: web.Request, kind: type[T]) -> T:
    """A JSON body (the page's script) or an ordinary form post (no script)."""
    if wants_json(request):
        return decoding.decode(await request.read(), kind)
    return decoding.convert(await form(request), kind)


def wants_json(request: web.Request) -> bool:
    return request.content_type == "application/json"


def same_origin(request: web.Request) -> None:
    """A browser names the page a form was posted from: only the page's own origin may post it."""
    origin = request.headers.get("Origin")
    if origin is not None and origin != f"{request.scheme}://{request.host}":
        raise ApiError(403, "cross_origin_refused", "This form only accepts submissions from its own page.")
