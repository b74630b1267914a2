"""The bell: a signed-in user's own notifications (a page, and JSON for the merchant app), marking them read, and
the user's own choice of kinds. Every role has a bell; what fills it is limited by role (notify/kinds.py)."""

from __future__ import annotations

from aiohttp import web

from accounts.roles import Can
from common.clock import iso
from notify import kinds, store
from web.api import audit_trail
from web.dashboard import app_keys
from web.dashboard.guard import done, signed_in
from web.dashboard.html import render
from web.edge.app_state import ctx
from web.edge.forms import form


def _shown(row) -> dict:
    return {"notification_id": row["notification_id"], "kind": row["kind"], "livemode": row["livemode"],
            "title": row["title"], "body": row["body"], "link": row["link"], "created_at": iso(row["created_at"]),
            "read": row["read_at"] is not None}


async def _choices(request: web.Request) -> list[dict]:
    staff = request[app_keys.STAFF]
    chosen = await store.choices(ctx(request).pool, staff.user_id)
    return [{"kind": k.value, "label": kinds.RULES[k].label, "on": kinds.wanted(staff.role, k, chosen.get(k))}
            for k in kinds.offered(staff.role)]


@signed_in(Can.SIGN_OUT)
async def page(request: web.Request) -> web.Response:
    found = await store.listed(ctx(request).pool, request[app_keys.STAFF].user_id)
    return render(request, "notifications.html", notifications=[_shown(r) for r in found],
                  choices=await _choices(request), section="notifications")


@signed_in(Can.SIGN_OUT)
@audit_trail.records_nothing(audit_trail.OWN_READING)
async def read(request: web.Request) -> web.Response:
    """One notification read (`notification_id`), or all of them; then back to the list, or to where it points."""
    posted = await form(request)
    c = ctx(request)
    await store.mark_read(c.pool, request[app_keys.STAFF].user_id, c.clock(), posted.get("notification_id"))
    target = posted.get("link", "")
    back = f"{request.app[app_keys.PREFIX]}{target}" if target.startswith("/") and not target.startswith("//") \
        else f"{request.app[app_keys.PREFIX]}/{request.match_info['mode']}/notifications"
    raise web.HTTPSeeOther(back)


@signed_in(Can.SIGN_OUT)
@audit_trail.records("notifications.changed")
async def choose(request: web.Request) -> web.Response:
    """The settings form: a box per kind offered to the role; an unticked box is a choice too."""
    posted = await form(request)
    staff = request[app_keys.STAFF]
    chosen = {k: posted.get(k.value) == "on" for k in kinds.offered(staff.role)}
    await store.choose(ctx(request).pool, staff.user_id, chosen)
    await audit_trail.record(request, "notifications.changed", object_id=staff.user_id,
                             details={"chosen": {k.value: on for k, on in chosen.items()}})
    raise await done(request, f"{request.app[app_keys.PREFIX]}/{request.match_info['mode']}/notifications",
                     "Your notification choices are saved.")


@signed_in(Can.SIGN_OUT, json=True)
async def app_list(request: web.Request) -> web.Response:
    """For the merchant app's bell: the unread count and the newest notifications."""
    pool, user_id = ctx(request).pool, request[app_keys.STAFF].user_id
    answer = web.json_response({"unread": await store.unread(pool, user_id),
                                "data": [_shown(r) for r in await store.listed(pool, user_id)]})
    answer.headers["Cache-Control"] = "no-store"
    return answer


@signed_in(Can.SIGN_OUT, json=True)
@audit_trail.records_nothing(audit_trail.OWN_READING)
async def app_read(request: web.Request) -> web.Response:
    body = await request.json() if request.can_read_body else {}
    notification_id = body.get("notification_id") if isinstance(body, dict) else None
    c = ctx(request)
    marked = await store.mark_read(c.pool, request[app_keys.STAFF].user_id, c.clock(),
                                   notification_id if isinstance(notification_id, str) else None)
    return web.json_response({"marked": marked, "unread": await store.unread(c.pool, request[app_keys.STAFF].user_id)})
