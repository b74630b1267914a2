"""The bare baseline: an aiohttp handler that inserts the same order row with asyncpg, one transaction per request."""

from __future__ import annotations

import argparse
import json
import os
import secrets
from datetime import datetime, timezone

import asyncpg
import msgspec
from aiohttp import web


class Body(msgspec.Struct):
    amount: str
    external_ref: str | None = None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8090")))
    args = parser.parse_args()
    decode = msgspec.json.Decoder(Body).decode

    async def resources(app):
        app["pool"] = await asyncpg.create_pool(os.environ["DATABASE_URL"], min_size=10, max_size=20)
        yield
        await app["pool"].close()

    async def create(request: web.Request) -> web.Response:
        body = decode(await request.read())
        order_id = f"ord_{secrets.token_hex(12)}"
        now = datetime.now(timezone.utc)
        number = int.from_bytes(secrets.token_bytes(6), "big")
        state = json.dumps({"order_id": order_id, "amount": body.amount, "external_ref": body.external_ref})
        await request.app["pool"].execute(
            "INSERT INTO orders (order_id, merchant_id, livemode, order_number, status, external_ref, state,"
            " version, created_at, updated_at) VALUES ($1, 'mer_baseline', false, $2, 'PENDING', $3, $4, 1, $5, $5)",
            order_id, number, body.external_ref, state, now,
        )
        return web.json_response({"order_id": order_id}, status=201)

    app = web.Application()
    app.cleanup_ctx.append(resources)
    app.router.add_post("/b2b/v1/checkout-sessions/quick", create)
    print(f"baseline: serving http://127.0.0.1:{args.port}/b2b/v1/checkout-sessions/quick", flush=True)
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
