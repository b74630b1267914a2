"""The refund execution screen (docs/spec.md §4.1 rule 6): what to send, a QR where the network has a link, the hash field,
and the verification progress its script polls; approve and reject for a refund still under review."""

from __future__ import annotations

import msgspec
from aiohttp import web

from accounts.roles import Can
from actors import messages as m
from common import money
from web.api import audit_trail, bodies
from web.api.answers import refund_json, respond
from web.api.handlers import refund_transactions, refunds
from web.dashboard import app_keys, details
from web.dashboard.guard import done, signed_in
from web.dashboard.html import problem, render
from web.edge import decoding
from web.edge.app_state import ctx
from web.edge.errors import ApiError
from web.edge.forms import form
from web.pages import qr
from web.reads import owned

POLL_MS = 2000
FINAL = ("EXECUTED", "REJECTED")
_SHOWN = ("tx_hash", "status", "reason", "confirmations", "required")


async def _refund(request: web.Request) -> tuple[dict, list[dict]]:
    refund_id = request.match_info["refund_id"]
    order = await owned.order(request, await owned.order_id_of(request, "refund", refund_id))
    txs = msgspec.to_builtins(await refund_transactions.transactions(ctx(request).pool, refund_id))
    refund = msgspec.to_builtins(refund_json(ctx(request).settings, order, order.refund(refund_id)))
    return {**refund, "order_number": order.order_number}, txs


def progress(refund: dict, txs: list[dict]) -> dict:
    """The refund's state and its latest transfer's verification (confirmations n of m), for the page's script."""
    latest = txs[-1] if txs else None
    return {"status": refund["status"], "final": refund["status"] in FINAL,
            "transaction": latest and {k: latest[k] for k in _SHOWN}}


async def screen(request: web.Request, code: int = 200, error: ApiError | None = None,
                 tx_hash: str = "") -> web.Response:
    refund, txs = await _refund(request)
    net = refund["refund_network"]
    send = details.payout(net, refund["refund_to_address"], refund["refund_token_address"],
                          money.parse(refund["amount"]))
    base = f"{request.app[app_keys.PREFIX]}/{request.match_info['mode']}/refunds/{refund['refund_id']}"
    now = progress(refund, txs)
    return render(
        request, "refund.html", code=code, refund=refund, transactions=txs, details=details, send=send,
        qr=qr.svg(send["link"], f"QR code of the {details.name(net)} payment link") if send["link"] else None,
        progress=now, error=problem(error), tx_hash=tx_hash,
        config={"progressUrl": f"{base}/progress", "pollMs": POLL_MS, "progress": now},
    )


@signed_in(Can.REFUND)
async def refund_screen(request: web.Request) -> web.Response:
    return await screen(request)


@signed_in(Can.REFUND)
@audit_trail.records("refund.transaction_submitted")
async def submit_tx(request: web.Request) -> web.Response:
    posted = await form(request)
    try:
        await refund_transactions.submit_transaction(request, request.match_info["refund_id"], decoding.convert(
            {k: posted.get(k, "") for k in ("tx_hash", "network", "token_address")}, bodies.SubmitTxIn))
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return await screen(request, exc.status, exc, posted.get("tx_hash", ""))
    raise await done(request, request.path.removesuffix("/submit-tx"),
                     "Transaction received: the refund is EXECUTED once it has enough confirmations.")


@signed_in(Can.REFUND, json=True)
async def refund_progress(request: web.Request) -> web.Response:
    answer = respond(progress(*await _refund(request)))
    answer.headers["Cache-Control"] = "no-store"
    return answer


async def _approve(_request, common):
    return m.ApproveRefund(**common)


def _back(request: web.Request, posted: dict) -> str:
    """The page the action was taken on (the review queue or the refund), never a place outside the dashboard."""
    wanted = posted.get("back", "")
    return wanted if wanted.startswith(request.app[app_keys.PREFIX] + "/") else request.path.rsplit("/", 1)[0]


@signed_in(Can.REFUND)
@audit_trail.records("refund.approved")
async def approve(request: web.Request) -> web.Response:
    posted = await form(request)
    refund = await refunds.review(request, _approve)
    raise await done(request, _back(request, posted), f"Refund {refund.refund_id} approved.")


@signed_in(Can.REFUND)
@audit_trail.records("refund.retried")
async def retry(request: web.Request) -> web.Response:
    """A card refund the provider refused, sent to the provider once more."""
    posted = await form(request)

    async def make(_request, common):
        return m.RetryRefund(**common)

    refund = await refunds.review(request, make)
    raise await done(request, _back(request, posted), f"Refund {refund.refund_id} sent to the card provider again.")


@signed_in(Can.REFUND)
@audit_trail.records("refund.rejected")
async def reject(request: web.Request) -> web.Response:
    posted = await form(request)
    reason = decoding.convert({"reason": posted.get("reason")}, bodies.RejectIn).reason

    async def make(_request, common):
        return m.RejectRefund(**common, reason=reason)

    refund = await refunds.review(request, make)
    raise await done(request, _back(request, posted), f"Refund {refund.refund_id} rejected.")
