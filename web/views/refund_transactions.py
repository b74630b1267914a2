"""submit-tx (SPEC 4.1): the merchant posts the refund transfer it broadcast; the watcher verifies it."""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from actors import messages as m
from actors.state import RefundStatus
from contract import api as contract
from service.clock import iso
from web import bodies, destinations, lookups
from web.commands import Ids, body, submit
from web.context import ctx
from web.errors import ApiError
from web.render import refund_json, respond
from web.route import Route

_COLUMNS = "network, tx_hash, token_address, status, reason, confirmations, required, submitted_at, checked_at"


async def transactions(pool, refund_id: str) -> list[dict]:
    rows = await pool.fetch(f"SELECT {_COLUMNS} FROM refund_transactions WHERE refund_id = $1 ORDER BY submitted_at",
                            refund_id)
    return [
        contract.RefundTransaction(**{k: (iso(v) if isinstance(v, datetime) else v) for k, v in dict(r).items()})
        for r in rows
    ]


async def _claim(pool, net, tx_hash: str, token: str, order, refund) -> bool:
    """Reserve (network, tx_hash) for this refund; True when this call made the claim."""
    claimed = await pool.fetchval(
        "INSERT INTO refund_transactions (network, tx_hash, refund_id, order_id, merchant_id, livemode,"
        " token_address, to_address, amount, required) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        " ON CONFLICT (network, tx_hash) DO NOTHING RETURNING refund_id",
        net.slug, tx_hash, refund.refund_id, order.order_id, order.merchant_id, order.livemode, token,
        refund.refund_to_address, refund.amount, net.confirmations,
    )
    if claimed:
        return True
    owner = await pool.fetchval("SELECT refund_id FROM refund_transactions WHERE network = $1 AND tx_hash = $2",
                                net.slug, tx_hash)
    if owner != refund.refund_id:
        raise ApiError(409, "tx_hash_already_used",
                       "This transaction was already submitted for another refund; one transfer pays one refund.",
                       "tx_hash")
    return False


async def submit_tx(request: web.Request) -> web.Response:
    posted = await body(request, bodies.SubmitTxIn)
    return respond(await submit_transaction(request, request.match_info["refund_id"], posted), status=202)


async def submit_transaction(request: web.Request, refund_id: str, posted: bodies.SubmitTxIn) -> dict:
    """Claim the transfer for the refund and hand it to the watchers; the dashboard's hash field calls this too."""
    net = destinations.network(posted.network, "network")
    tx_hash = destinations.tx_hash(net, posted.tx_hash, "tx_hash")
    token = destinations.token(net, posted.token_address, "token_address")
    order = await lookups.order(request, await lookups.order_id_of(request, "refund", refund_id))
    refund = order.refund(refund_id)
    if net.slug != refund.refund_network:
        raise ApiError(422, "network_mismatch",
                       f"This refund is paid on {refund.refund_network}; a transaction on {net.slug} cannot pay it.",
                       "network")
    if refund.status is not RefundStatus.APPROVED and refund.attempt(net.slug, tx_hash) is None:
        raise ApiError(409, "refund_state_conflict",
                       f"Only an APPROVED refund can be paid out; this one is {refund.status.value}.", "refund_id")
    pool = ctx(request).pool
    claimed = await _claim(pool, net, tx_hash, token, order, refund)
    command = m.SubmitRefundTx(order_id=order.order_id, merchant_id=order.merchant_id, livemode=order.livemode,
                               at=ctx(request).clock(), refund_id=refund_id, network=net.slug, tx_hash=tx_hash,
                               token_address=token)
    try:
        order = await submit(request, Ids(request), command)
    except ApiError:
        if claimed:
            await pool.execute("DELETE FROM refund_transactions WHERE network = $1 AND tx_hash = $2 AND refund_id = $3",
                               net.slug, tx_hash, refund_id)
        raise
    tx = next(t for t in await transactions(pool, refund_id) if (t.network, t.tx_hash) == (net.slug, tx_hash))
    return refund_json(ctx(request).settings, order, order.refund(refund_id), contract.RefundSubmitted,
                       verification=tx)


ROUTES = [
    Route("POST", "/refunds/{refund_id}/submit-tx", submit_tx,
          "Post the refund transfer's hash; it is verified on-chain and the refund becomes EXECUTED at depth",
          bodies.SubmitTxIn, 202, response=contract.RefundSubmitted),
]
