"""Errors raised by the client: the service's JSON error body as an exception, and what the client refused itself."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error this library raises."""


class ApiError(ServiceError):
    """The service answered with an error: `{"error": {"type", "code", "message", "param"}}`."""

    def __init__(self, status: int, type: str, code: str, message: str, param: str | None = None,
                 request_id: str | None = None, body: dict | None = None, headers: dict[str, str] | None = None):
        super().__init__(f"{status} {code}: {message}" + (f" (param {param})" if param else "")
                         + (f" [request {request_id}]" if request_id else ""))
        self.status, self.type, self.code, self.message, self.param = status, type, code, message, param
        self.request_id = request_id
        self.body = body or {}
        self.headers = headers or {}


class AuthenticationError(ApiError):
    """401: a bad or missing signature, an unknown key."""


class PermissionDeniedError(ApiError):
    """403: the key may not do this (another merchant's id, a role)."""


class NotFoundError(ApiError):
    """404: no such object for this merchant and mode."""


class ConflictError(ApiError):
    """409: the object's state refuses the change, or an Idempotency-Key reused with another request."""


class InvalidRequestError(ApiError):
    """400 and 422: a body, query or path the service does not accept; `param` names the field."""


class RateLimitError(ApiError):
    """429 after the retries were spent."""


class ServerError(ApiError):
    """5xx after the retries were spent (503: a dependency down; 504: the command may still be applied)."""


class ConnectionFailed(ServiceError):
    """No answer at all (connection refused, dropped, timed out) after the retries were spent."""


class DecodeError(ServiceError):
    """An answer this version of the library cannot read (not JSON, or not the shape of API v1)."""


class WebhookVerificationError(ServiceError):
    """A webhook delivery whose signature or timestamp does not verify: refuse it (answer 400)."""


_BY_STATUS = {400: InvalidRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
              409: ConflictError, 422: InvalidRequestError, 429: RateLimitError}


def error_class(status: int) -> type[ApiError]:
    return _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
