"""OpenAPI 3.1 document generated from the route table and the msgspec body structs."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from aiohttp import web

from contract import api as contract
from web.api.routes import PREFIX, ROUTES

_SIGNED = [{"clientId": [], "timestamp": [], "signature": []}]


def document() -> dict[str, Any]:
    shapes = list(dict.fromkeys([contract.Error, *(r.body for r in ROUTES if r.body is not None),
                                 *(r.response for r in ROUTES if r.response is not None)]))
    schemas, components = msgspec.json.schema_components(shapes, ref_template="#/components/schemas/{name}")
    by_type = dict(zip(shapes, schemas))
    paths: dict[str, dict] = {}
    operation_ids: set[str] = set()
    for route in ROUTES:
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", route.path)
        ]
        params += [{"name": name, "in": "query", "required": False, "schema": {"type": "string"}} for name in route.query]
        if route.method in ("POST", "PATCH"):
            params.append({"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string", "maxLength": 255}})
        # The actions that answer POST and PATCH alike (web/api/routes.py) share a handler: the second method's
        # operation is named after its method, so every operationId stays unique.
        operation_id = route.handler.__name__
        if operation_id in operation_ids:
            operation_id = f"{operation_id}_{route.method.lower()}"
        operation_ids.add(operation_id)
        operation: dict[str, Any] = {
            "summary": route.summary,
            "operationId": operation_id,
            "security": _SIGNED,
            "parameters": params,
            "responses": {
                str(route.status): {"description": "Success", "content": _content(route, by_type[route.response])},
                "default": {"description": "Error", "content": {"application/json": {"schema": by_type[contract.Error]}}},
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


def _content(route, schema: dict) -> dict:
    if not route.streamed:
        return {"application/json": {"schema": schema}}
    # One JSON object per line; the CSV file has the same columns, the header row first.
    return {"application/x-ndjson": {"schema": schema}, "text/csv": {"schema": {"type": "string"}}}


async def serve(request: web.Request) -> web.Response:
    return web.json_response(document())


ROUTE_DEFS = [web.get(PREFIX + "/openapi.json", serve)]
