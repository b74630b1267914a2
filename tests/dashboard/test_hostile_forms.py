"""Every non-API endpoint that takes a body, fed what no browser sends: a 4xx, never a 5xx."""

from __future__ import annotations

import pytest

from tests.dashboard.support import make_staff
from tests.integration.helpers import quick
from web.dashboard.routes import ROUTES

GARBAGE = [
    ("application/json", b"{not json"),
    ("application/json", b"[1, 2]"),
    ("application/json", b'{"csrf": "a\xffb"}'),
    ("application/x-www-form-urlencoded", b"csrf=%FF%FE&amount=%00%01&reason=\xff"),
    ("application/x-www-form-urlencoded", b"\xff\xfe\x00=\x00"),
    ("multipart/form-data; boundary=x", b"--x\r\nnot a part\r\n--x--"),
    ("text/plain", b"\x00" * 64),
]
POSTS = [path for method, path, _ in ROUTES if method == "POST"]


def _concrete(path: str, ids: dict[str, str]) -> str:
    return (path.replace("{mode:test|live}", "test").replace("{order_id}", ids["order_id"])
            .replace("{token}", "rfqt_missing").replace("{refund_id}", "re_missing")
            .replace("{endpoint_id}", "we_missing"))


@pytest.mark.parametrize("content_type,raw", GARBAGE, ids=[f"{c.split(';')[0]}-{i}" for i, (c, _) in enumerate(GARBAGE)])
async def test_dashboard_forms_refuse_garbage_without_a_5xx(stack, http, content_type, raw):
    staff = await make_staff(stack)
    await http.sign_in(staff)
    order_id = (await quick(staff.client))["order_id"]
    for path in POSTS:
        url = http.dashboard + _concrete(path, {"order_id": order_id})
        async with http.session.post(url, data=raw, headers={"Content-Type": content_type},
                                     allow_redirects=False) as resp:
            assert resp.status < 500, (path, resp.status, await resp.text())


@pytest.mark.parametrize("content_type,raw", GARBAGE, ids=[f"{c.split(';')[0]}-{i}" for i, (c, _) in enumerate(GARBAGE)])
async def test_buyer_pages_refuse_garbage_without_a_5xx(stack, merchant, content_type, raw):
    created = await quick(merchant)
    for path in (f"/c/{created['session_key']}/payment-attempts", "/refund-request/rfqt_missing",
                 "/refund-request/rfqt_missing/renewal"):
        async with stack.http.post(stack.base_url + path, data=raw, headers={"Content-Type": content_type}) as resp:
            assert resp.status < 500, (path, resp.status, await resp.text())
