"""The app's shell over HTTP: in each checkout locale, no user data in it (a cached copy shows nothing stale), its
worker allowed the app's scope, its manifest fetchable under the page's CSP."""

from __future__ import annotations

import html

import pytest

from web.i18n import LOCALES, TABLES


@pytest.mark.parametrize("locale", LOCALES)
async def test_the_shell_speaks_each_checkout_locale(stack, http, locale):
    async with http.session.get(http.dashboard + "/app", headers={"Accept-Language": f"{locale};q=0.9"}) as answer:
        text = await answer.text()
        assert answer.status == 200
        assert "manifest-src 'self'" in answer.headers["Content-Security-Policy"]
        assert answer.headers["X-Frame-Options"] == "DENY"
    assert f'<html lang="{locale}">' in text
    for key in ("app_title", "app_offline", "app_sell", "app_note"):
        assert html.escape(TABLES[locale][key], quote=False) in text, key


async def test_the_shell_holds_no_user_data_and_its_worker_may_control_the_app(stack, http, staff):
    await http.sign_in(staff)
    status, text = await http.get("/app")
    assert status == 200 and staff.email not in text and 'name="csrf" value="' not in text
    async with http.session.get(http.dashboard + "/app/sw.js") as answer:
        assert answer.status == 200 and answer.headers["Service-Worker-Allowed"] == "/dashboard/"
        assert answer.headers["Content-Type"].startswith("text/javascript")
    status, me = await http.get("/app/me")
    assert status == 200 and staff.email in me


async def test_signed_out_the_app_asks_for_a_sign_in(stack, http):
    async with http.session.get(http.dashboard + "/app/me") as answer:
        assert answer.status == 401 and (await answer.json())["error"]["code"] == "signed_out"
