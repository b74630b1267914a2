"""Limits every request meets before a handler runs: the body's size, and the shape of ids in the path."""

from __future__ import annotations

import re

from aiohttp import web

from web.edge.errors import ApiError

# Path parameters that name an object: ids, session keys and tokens are made of these characters only.
_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_NAMED_OBJECTS = ("_id", "token", "session_key")


def body_limit_middleware(max_bytes: int):
    @web.middleware
    async def body_limit(request: web.Request, handler):
        # A declared length over the limit is refused before a byte of the body is read; a chunked body is
        # cut off at the same limit while it is read (client_max_size, web/app.py).
        if request.content_length is not None and request.content_length > max_bytes:
            raise ApiError(413, "request_too_large", f"The request body may hold at most {max_bytes} bytes.")
        return await handler(request)

    return body_limit


@web.middleware
async def path_ids_middleware(request: web.Request, handler):
    for name, value in request.match_info.items():
        if name.endswith(_NAMED_OBJECTS) and not _ID.fullmatch(value):
            raise ApiError(400, "invalid_id", f"`{name}` is not a well-formed id: letters, digits, `_` and `-`, "
                           "at most 128.", name)
    return await handler(request)
