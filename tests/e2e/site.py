"""The merchant's test site: another origin than the checkout's, loading one SDK build per page."""

from __future__ import annotations

import html
import json
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

HARNESS = Path(__file__).with_name("harness.js")
SIGNED_HASH = "0x" + "ab" * 32  # what the merchant's onSignRequest answers for eth_sendTransaction

# How each build reaches window.Service. CommonJS needs a `module` to fill: the build requires nothing
# (the SDK has no dependencies), so two lines of shim stand in for a bundler.
LOADERS = {
    "esm": '<script type="module">import * as sdk from "{base}/sdk/index.js"; window.Service = sdk;</script>',
    "cjs": (
        "<script>var module = {{ exports: {{}} }}; var exports = module.exports;</script>\n"
        '<script src="{base}/sdk/index.cjs"></script>\n'
        "<script>window.Service = module.exports;</script>"
    ),
    "iife": '<script src="{base}/sdk/index.global.js"></script>',
}

SHOP = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test shop</title><link rel="icon" href="data:,">
<style>body {{ font-family: sans-serif; margin: 0; padding: 16px; }} .tall {{ height: 3000px; }}</style></head>
<body>
<h1>Test shop ({build})</h1>
<button id="behind" type="button">A button behind the overlay</button> <input id="field" aria-label="field">
<div id="embed"></div>
<div class="tall"></div>
<script>window.SHOP = {settings};</script>
{loader}
<script src="/harness.js"></script>
</body></html>
"""

SILENT = "<!doctype html><title>Silent</title><p>A page that never posts SERVICE_READY.</p>"
RETURNED = "<!doctype html><title>Returned</title><h1 id=\"returned\">{result}</h1>"


def app(checkout_base: str) -> web.Application:
    async def shop(request: web.Request) -> web.Response:
        build = request.query.get("build", "iife")
        settings = {"checkoutUrl": checkout_base, "publicKey": request.query.get("pk", ""), "signedHash": SIGNED_HASH}
        text = SHOP.format(build=html.escape(build), settings=json.dumps(settings),
                           loader=LOADERS[build].format(base=checkout_base))
        return web.Response(text=text, content_type="text/html")

    async def harness(request: web.Request) -> web.FileResponse:
        return web.FileResponse(HARNESS, headers={"Content-Type": "text/javascript"})

    async def silent(request: web.Request) -> web.Response:
        return web.Response(text=SILENT, content_type="text/html")

    async def returned(request: web.Request) -> web.Response:
        return web.Response(text=RETURNED.format(result=html.escape(request.query.get("result", "back"))),
                            content_type="text/html")

    application = web.Application()
    application.router.add_get("/shop", shop)
    application.router.add_get("/harness.js", harness)
    application.router.add_get("/silent/c/{session_key}", silent)
    application.router.add_get("/return", returned)
    return application


async def start(checkout_base: str) -> TestServer:
    server = TestServer(app(checkout_base), host="127.0.0.1")
    await server.start_server()
    return server
