"""JSON errors: `{"error": {"type", "code", "message", "param"}}`, one status per kind of fault."""

from __future__ import annotations

import logging
import re

import msgspec
from aiohttp import web

from common import faults
from web.edge.app_state import COMMAND_ID

log = logging.getLogger(__name__)

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "card_error",  # the card provider declined the buyer's card (the checkout's card payments)
    403: "permission_error",
    404: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    423: "permission_error",  # the merchant app's session is PIN-locked
    429: "rate_limit_error",
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, param: str | None = None,
                 headers: dict[str, str] | None = None, **extra):
        super().__init__(message)
        self.status, self.code, self.message, self.param, self.extra = status, code, message, param, extra
        self.headers = headers

    def response(self) -> web.Response:
        body = {"type": _TYPES.get(self.status, "api_error"), "code": self.code, "message": self.message}
        if self.param is not None:
            body["param"] = self.param
        body.update(self.extra)
        return web.json_response({"error": body}, status=self.status, headers=self.headers)


_AT = re.compile(r"at `\$\.?([^`]*)`")
_UNKNOWN = re.compile(r"unknown field `([^`]*)`")
_MISSING = re.compile(r"missing required field `([^`]*)`")


def from_validation(exc: msgspec.ValidationError) -> ApiError:
    """Turn msgspec's message into an error naming the field, e.g. `line_items[0].quantity`."""
    text = str(exc)
    # msgspec writes a dict's key as `[...]`; the field is the dict itself.
    path = (_AT.search(text) or [None, ""])[1].replace("[...]", "").lstrip(".")
    leaf = (_UNKNOWN.search(text) or _MISSING.search(text) or [None, None])[1]
    param = ".".join(p for p in (path, leaf) if p) or None
    if _UNKNOWN.search(text):
        return ApiError(422, "unknown_field", f"Unknown field `{param}`.", param)
    if _MISSING.search(text):
        return ApiError(422, "missing_field", f"`{param}` is required.", param)
    return ApiError(422, "invalid_field", text.split(" - at ")[0] + (f" (`{param}`)" if param else ""), param)


@web.middleware
async def error_middleware(request: web.Request, handler):
    try:
        return await handler(request)
    except ApiError as exc:
        return exc.response()
    except web.HTTPException as exc:
        if exc.status >= 400 and request.path.startswith("/b2b/"):
            code = {404: "route_not_found", 405: "method_not_allowed", 413: "request_too_large"}.get(
                exc.status, "http_error"
            )
            return ApiError(exc.status, code, exc.reason).response()
        raise
    # Redis or PostgreSQL out of reach (or not yet reached since the process started): the request did nothing, or
    # (a command already queued) is answered on retry, so the answer names the command when there is one. Pages and
    # the dashboard get the same 503: a dependency's fault is never answered as this code's.
    except faults.UNAVAILABLE as exc:
        faults.unavailable(log, f"{request.method} {request.path}", exc, "answered 503")
        named = {"command_id": request[COMMAND_ID]} if COMMAND_ID in request else {}
        return ApiError(503, "service_unavailable", "A service dependency is unavailable; retry shortly.",
                        **named).response()
    except Exception:
        if not request.path.startswith("/b2b/"):
            raise
        log.exception("%s %s failed", request.method, request.path)
        return ApiError(500, "internal_error", "The request failed on our side; retry it with the same Idempotency-Key.").response()
