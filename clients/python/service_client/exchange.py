"""One call to the API as a plan of steps (send this request, sleep this long) that the sync and the asyncio
clients both drive: signing, the Idempotency-Key kept across retries, the retry rules and decoding live here once."""

from __future__ import annotations

import json
import keyword
import re
import time
import uuid
from collections.abc import Generator
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode

import httpx

from . import retries
from .errors import ApiError, ConnectionFailed, DecodeError, error_class
from .models import ApiObject, ResponseInfo
from .operations import RENAMED_PARAMS, Op
from .signing import signed_headers
from .version import API_VERSION, VERSION

USER_AGENT = f"service-client-python/{VERSION} (API {API_VERSION})"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class Config(NamedTuple):
    public_key: str
    secret_key: str
    merchant_id: str | None
    base_url: str
    max_retries: int


class Sleep(NamedTuple):
    seconds: float


class Call(NamedTuple):
    """What one method call asks for, before any attempt."""

    op: Op
    path: str                 # with its query string
    body: bytes
    idempotency_key: str | None


def build(config: Config, op: Op, args: tuple, params: dict[str, Any], idempotency_key: str | None) -> Call:
    """Path parameters positionally in the order of the path (or by name; `merchant_id` defaults to the client's);
    other keyword arguments are the JSON body of a write or the query of a read; a name that is a Python keyword
    takes a trailing underscore (`from_=` sends `from`)."""
    names = _PLACEHOLDER.findall(op.path)
    params = {_wire_name(k): v for k, v in params.items()}
    for old, new in RENAMED_PARAMS.items():
        if old in params and new in names and new not in params:
            params[new] = params.pop(old)
    positional = [n for n in names if n != "merchant_id"]
    if len(args) > len(positional):
        raise TypeError(f"{op.resource}.{op.name} takes {len(positional)} positional argument(s): {positional}")
    values = dict(zip(positional, args))
    for name in names:
        if name in params:
            values[name] = params.pop(name)
    if "merchant_id" in names and "merchant_id" not in values:
        if not config.merchant_id:
            raise TypeError(f"{op.resource}.{op.name} needs merchant_id: pass it to the client or to the call")
        values["merchant_id"] = config.merchant_id
    missing = [n for n in names if not values.get(n)]
    if missing:
        raise TypeError(f"{op.resource}.{op.name} is missing {missing}")
    path = _PLACEHOLDER.sub(lambda mt: quote(str(values[mt.group(1)]), safe=""), op.path)
    body = b""
    if op.method in ("POST", "PATCH"):
        body = json.dumps(params, separators=(",", ":")).encode()
    elif params:
        path += "?" + urlencode({k: _query_value(v) for k, v in params.items() if v is not None})
    key = (idempotency_key or str(uuid.uuid4())) if op.method in ("POST", "PATCH", "DELETE") else None
    return Call(op, path, body, key)


def _wire_name(name: str) -> str:
    return name[:-1] if name.endswith("_") and keyword.iskeyword(name[:-1]) else name


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value.isoformat() if hasattr(value, "isoformat") else str(value)  # a datetime or a date


def _request(config: Config, call: Call) -> httpx.Request:
    accept = "text/csv, application/x-ndjson, application/json" if call.op.streams else "application/json"
    headers = {"User-Agent": USER_AGENT, "Accept": accept,
               **signed_headers(config.public_key, config.secret_key, call.op.method, call.path, call.body,
                                int(time.time()))}
    if call.body:
        headers["Content-Type"] = "application/json"
    if call.idempotency_key:
        headers["Idempotency-Key"] = call.idempotency_key
    return httpx.Request(call.op.method, config.base_url + call.path, headers=headers, content=call.body)


def run(config: Config, call: Call) -> Generator[httpx.Request | Sleep, Any, tuple[Any, ResponseInfo]]:
    """Yields requests (answered with an httpx.Response, or the transport exception) and sleeps; returns the
    decoded JSON and how it came, or raises. Each attempt is signed afresh; a write keeps its Idempotency-Key.
    A file download (`op.streams`) returns its response unread once it succeeded: its errors, which come before
    the file starts, are read and retried like any other."""
    attempt = 0
    while True:
        attempt += 1
        answer = yield _request(config, call)
        if isinstance(answer, Exception):
            status, headers, body, code = None, {}, None, None
        else:
            status, headers = answer.status_code, {k.lower(): v for k, v in answer.headers.items()}
            if status < 400 and call.op.streams:
                return answer, ResponseInfo(status, headers, attempt)
            body = _json(answer, call)
            code = (body.get("error") or {}).get("code") if isinstance(body, dict) and status >= 400 else None
            if status < 400:
                if not isinstance(body, dict):
                    raise DecodeError(f"{call.op.method} {call.path}: answered {status} without a JSON object")
                return body, ResponseInfo(status, headers, attempt)
        wait = retries.delay(attempt, headers, code, time.time()) if retries.retryable(status, code) else None
        if wait is None or attempt > config.max_retries:
            if isinstance(answer, Exception):
                raise ConnectionFailed(f"{call.op.method} {call.path}: no answer after {attempt} attempt(s): "
                                       f"{type(answer).__name__}: {answer}") from answer
            raise _api_error(status, body, headers, call)
        yield Sleep(wait)


def _json(answer: httpx.Response, call: Call) -> Any:
    if not answer.content:
        return None
    try:
        return answer.json()
    except ValueError as exc:
        if answer.status_code >= 500:
            return None  # a proxy's error page: the status says enough
        raise DecodeError(f"{call.op.method} {call.path}: answered {answer.status_code} with a body that is not "
                          f"JSON ({answer.headers.get('content-type')})") from exc


def _api_error(status: int, body: Any, headers: dict[str, str], call: Call) -> ApiError:
    error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
    return error_class(status)(
        status, error.get("type", "api_error"), error.get("code", f"http_{status}"),
        error.get("message", f"{call.op.method} {call.path} answered {status}"), error.get("param"),
        error.get("request_id") or headers.get("x-request-id"), body if isinstance(body, dict) else None, headers)


def decode(op: Op, body: dict, info: ResponseInfo) -> ApiObject:
    obj = op.returns(body, f"{op.resource}.{op.name}")
    obj.response = info
    return obj


def page(op: Op, body: dict) -> tuple[list[dict], str | None]:
    """The items of a list answer and the cursor of the next page (None on the last)."""
    data = body.get("data")
    if not isinstance(data, list):
        raise DecodeError(f"{op.resource}.{op.name}: a list answer without `data`")
    cursor = body.get("next_cursor") if body.get("has_more") else None
    return data, cursor
