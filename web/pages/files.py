"""Static files of the checkout origin: the SDK builds (/sdk/) and the pages' own scripts and styles (/assets/)."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

WEB = Path(__file__).resolve().parent.parent
SDK_DIST = WEB / "sdk" / "dist"
ASSETS = WEB / "static"
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".cjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".map": "application/json",
    ".ts": "text/plain; charset=utf-8",  # index.d.ts
    ".cts": "text/plain; charset=utf-8",  # index.d.cts
    ".png": "image/png",  # the merchant app's icons
}


def serve(folder: Path, name: str, headers: dict[str, str]) -> web.FileResponse:
    path = folder / name
    kind = _TYPES.get(path.suffix)
    # Names come from the URL: only plain file names of known kinds, never a path out of the folder.
    if kind is None or "/" in name or "\\" in name or name.startswith(".") or not path.is_file():
        raise web.HTTPNotFound()
    return web.FileResponse(path, headers={"Content-Type": kind, "X-Content-Type-Options": "nosniff", **headers})


async def sdk(request: web.Request) -> web.FileResponse:
    # Merchant pages on any origin load these, and a module script is fetched with CORS.
    return serve(SDK_DIST, request.match_info["name"], {
        "Access-Control-Allow-Origin": "*",
        "Cross-Origin-Resource-Policy": "cross-origin",
        "Cache-Control": "public, max-age=300",
    })


async def assets(request: web.Request) -> web.FileResponse:
    return serve(ASSETS, request.match_info["name"], {"Cache-Control": "public, max-age=300"})
