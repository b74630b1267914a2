"""OpenAPI 3.1 document generated from the route table and the msgspec body structs."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from aiohttp import web

from web.routes import PREFIX, ROUTES

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["type", "code", "message"],
            "properties": {k: {"type": "string"} for k in ("type", "code", "message", "param")},
        }
    },
}
_SIGNED = [{"clientId": [], "timestamp": [], "signature": []}]


def document() -> dict[str, Any]:
    bodies = [r.body for r in ROUTES if r.body is not None]
    schemas, components = msgspec.json.schema_components(bodies, ref_template="#/components/schemas/{name}")
    by_type = dict(zip(bodies, schemas))
    paths: dict[str, dict] = {}
    for route in ROUTES:
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", route.path)
        ]
        if route.method in ("POST", "PATCH"):
            params.append({"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string", "maxLength": 255}})
        operation: dict[str, Any] = {
            "summary": route.summary,
            "operationId": route.handler.__name__,
            "security": _SIGNED,
            "parameters": params,
            "responses": {
                str(route.status): {"description": "Success", "content": {"application/json": {"schema": {"type": "object"}}}},
                "default": {"description": "Error", "content": {"application/json": {"schema": _ERROR}}},
            },
        }
        if route.body is not None:
            operation["requestBody"] = {"required": False, "content": {"application/json": {"schema": by_type[route.body]}}}
        paths.setdefault(PREFIX + route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "Checkout, orders and refunds B2B API", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "clientId": {"type": "apiKey", "in": "header", "name": "X-Client-ID"},
                "timestamp": {"type": "apiKey", "in": "header", "name": "X-Timestamp"},
                "signature": {"type": "apiKey", "in": "header", "name": "X-Signature",
                              "description": "lowercase hex HMAC-SHA256 of METHOD\\nPATH\\nTIMESTAMP\\nBODY"},
            },
        },
    }


async def serve(request: web.Request) -> web.Response:
    return web.json_response(document())
