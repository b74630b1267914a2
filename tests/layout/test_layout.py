"""Every page of tests/layout/screens.py at a phone's and a desktop's width in Chromium: no two visible controls or
labels overlap, nothing runs out of its card or the viewport (tests/layout/geometry.js measures the boxes), networks
are named as people know them, icons are drawn, not emoji; screenshots go to artifacts/screenshots/layout/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from common.network_names import NAMES
from tests.dashboard.support import SIZES
from tests.layout.screens import SCREENS, opened

GEOMETRY = (Path(__file__).parent / "geometry.js").read_text()
# A network's slug where its name belongs ("on sepolia"): any slug as a word of its own, in lower case (not a
# wallet link's scheme, "ethereum:0x...").
SLUGS = re.compile(r"(?<![\w/.-])(" + "|".join(sorted(map(re.escape, NAMES), key=len, reverse=True)) + r")(?![\w:-])")
# Pictographs that come out as empty boxes where no emoji font is installed: icons are inline SVG instead.
EMOJI = re.compile("[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]")
# Drawings with no words for a screen reader: an image without a name, or a hidden icon in a control without one.
UNNAMED_ICONS = """[...document.querySelectorAll('svg:not(svg svg)')].filter((svg) => svg.checkVisibility()).filter((svg) => {
  if (svg.getAttribute('aria-hidden') === 'true') {
    const control = svg.closest('a, button');
    return !control || !(control.getAttribute('aria-label') || control.innerText.trim());
  }
  return !(svg.getAttribute('aria-label') || svg.querySelector('title'));
}).map((svg) => svg.outerHTML.slice(0, 80))"""


async def layout_faults(page) -> list[str]:
    return await page.evaluate(GEOMETRY)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", SCREENS)
async def test_nothing_overlaps_or_runs_out(browser, world, shots, name, size):
    async with opened(browser, world, name, size) as page:
        await page.evaluate("document.fonts.ready")
        await page.screenshot(path=shots / f"{name}-{size}.png", full_page=True)
        text = await page.locator("body").inner_text()
        faults = await layout_faults(page)
        assert not faults, "\n".join(faults)
        assert SLUGS.findall(text) == [], "a network named by its slug"
        assert EMOJI.findall(text) == [], "an emoji where an icon belongs"
        assert await page.evaluate(UNNAMED_ICONS) == []
