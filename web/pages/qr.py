"""QR codes as inline SVG (segno), so the page needs no image requests and its CSP no external sources."""

from __future__ import annotations

from functools import lru_cache

import segno
from markupsafe import Markup


@lru_cache(maxsize=512)
def svg(content: str, title: str) -> Markup:
    """A scalable QR with a white quiet zone; error level M survives a phone camera's glare."""
    code = segno.make(content, error="m", micro=False)
    return Markup(code.svg_inline(scale=1, border=4, dark="#111", light="#fff", omitsize=True, title=title,
                                  svgclass="qr-code", lineclass=None))


@lru_cache(maxsize=512)
def data_uri(content: str) -> str:
    """The same QR as an image URL, for a script to show without writing markup into the page."""
    return segno.make(content, error="m", micro=False).svg_data_uri(scale=1, border=4, dark="#111", light="#fff",
                                                                    omitsize=True)
