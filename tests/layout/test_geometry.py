"""The layout checker (tests/layout/geometry.js) on small pages made to show one fault each, and on one with none."""

from __future__ import annotations

import pytest

from tests.layout.test_layout import layout_faults

CARD = '<style>.card { width: 200px; padding: 10px; border: 1px solid; }</style>'
# (page body, the start of each fault it must report)
PAGES = {
    "clean": (CARD + '<div class="card"><label for="a">Name</label><input id="a"><button>Save</button></div>', []),
    "overlapping buttons": ('<button style="position:absolute;left:10px;top:10px">One</button>'
                            '<button style="position:absolute;left:20px;top:12px">Two</button>',
                            ['overlap: <button> "One" and <button> "Two"']),
    "a field out of its card": (CARD + '<div class="card"><input style="width:250px"></div>',
                                ['out of its card']),
    "a button out of the viewport": ('<button style="margin-left:500px">Far</button>',
                                     ['out of the viewport (390 px): <button> "Far"', 'the page scrolls sideways']),
    "a label spilling out of its box": ('<label style="display:block;width:40px;white-space:nowrap">A long label</label>',
                                        ['text runs out of its box: <label> "A long label"']),
    "a cut without an ellipsis": ('<h2 style="width:40px;white-space:nowrap;overflow:hidden">A long title</h2>',
                                  ['text cut without an ellipsis: <h2> "A long title"']),
    "a cut with an ellipsis": ('<h2 style="width:40px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
                               'A long title</h2>', []),
    "a closed section's content": ('<details><summary>More</summary><button style="position:absolute;top:0">A'
                                   '</button><button style="position:absolute;top:0">B</button></details>', []),
    "a table scrolling sideways in its card": (CARD + '<div class="card"><div style="overflow-x:auto">'
                                               '<p style="width:300px">wide</p></div></div>',
                                               ['scrolls sideways inside its card']),
}


@pytest.mark.parametrize("name", PAGES)
async def test_the_checker_reports_what_is_wrong_and_only_that(browser, name):
    body, expected = PAGES[name]
    context = await browser.new_context(viewport={"width": 390, "height": 600})
    try:
        page = await context.new_page()
        await page.set_content(f"<!doctype html><html><body style='margin:0'>{body}</body></html>")
        found = await layout_faults(page)
        assert len(found) == len(expected), found
        for fault, start in zip(sorted(found), sorted(expected)):
            assert fault.startswith(start), (fault, start)
    finally:
        await context.close()
