"""The query parameters a hosted page honours (docs/checkout-page.md); a malformed one is ignored, never an error."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import msgspec
from aiohttp import web

from web import i18n

_EVM_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_TRUE = {"1", "true"}
FRAMED_MODES = ("popup", "embed")
MAX_URL = 2048
MAX_CHAIN_ID = 2**53 - 1  # what a JavaScript number holds exactly


class PageParams(msgspec.Struct, frozen=True, kw_only=True):
    locale: str
    hide_summary: bool = False
    hide_header: bool = False
    wallet_address: str | None = None
    wallet_chain_id: int | None = None
    sdk_mode: str | None = None  # popup or embed: the page is framed by the SDK, which listens
    return_url: str | None = None  # redirect mode: where the merchant page was

    @property
    def framed(self) -> bool:
        return self.sdk_mode is not None


def http_url(value: str | None) -> str | None:
    """An absolute http(s) URL, or None: anything else (javascript:, relative) must never be navigated to."""
    if not value or len(value) > MAX_URL:
        return None
    parts = urlsplit(value)
    return value if parts.scheme in ("http", "https") and parts.netloc else None


def _chain_id(value: str | None) -> int | None:
    if value is None or not value.isdigit():
        return None
    number = int(value)
    return number if 0 < number <= MAX_CHAIN_ID else None


def read(request: web.Request) -> PageParams:
    q = request.query
    wallet = q.get("wallet_address")
    return PageParams(
        locale=i18n.choose(q.get("locale"), request.headers.get("Accept-Language")),
        hide_summary=q.get("hide_summary", "").lower() in _TRUE,
        hide_header=q.get("hide_header", "").lower() in _TRUE,
        # Only EVM wallets can be driven from the page (EIP-1193), so only their addresses pre-connect.
        wallet_address=wallet if wallet and _EVM_ADDRESS.fullmatch(wallet) else None,
        wallet_chain_id=_chain_id(q.get("wallet_chain_id")),
        sdk_mode=q.get("sdk_mode") if q.get("sdk_mode") in FRAMED_MODES else None,
        return_url=http_url(q.get("return_url")),
    )
