"""submit-tx (docs/spec.md §4.1): the merchant posts the refund transfer it broadcast; the watcher verifies it."""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from actors import messages as m
from actors.rules import CARD
from common.clock import iso
from contract import api as contract
from web.api import audit_trail, bodies, chain_inputs
from web.api.answers import refund_json, respond
from web.api.commands import body, ids_of, submit
from web.api.route import Route
from web.edge.app_state import ctx
from web.reads import networks, owned

# Before the watcher's first check a transfer shows no confirmations of the depth its network asks for.
_READ = (
    "SELECT network, tx_hash, t.token_address, t.status, t.reason, coalesce(c.confirmations, 0) AS confirmations,"
    " c.required, t.submitted_at, c.checked_at FROM refund_transactions t"
    " LEFT JOIN refund_transfer_checks c USING (network, tx_hash) WHERE t.refund_id = $1 ORDER BY t.submitted_at"
)


async def transactions(pool, refund_id: str) -> list[contract.RefundTransaction]:
    found = []
    for r in await pool.fetch(_READ, refund_id):
        row = {k: (iso(v) if isinstance(v, datetime) else v) for k, v in dict(r).items()}
        if row["network"] == CARD:  # the provider's word settles a card refund: it has no confirmations
            row["confirmations"] = None
        elif row["required"] is None:
            row["required"] = networks.registry().network(row["network"]).confirmations
        found.append(contract.RefundTransaction(**row))
    return found


@audit_trail.records("refund.transaction_submitted")
async def submit_tx(request: web.Request) -> web.Response:
    posted = await body(request, bodies.SubmitTxIn)
    return respond(await submit_transaction(request, request.match_info["refund_id"], posted), status=202)


async def submit_transaction(request: web.Request, refund_id: str, posted: bodies.SubmitTxIn) -> dict:
    """Post the transfer for the refund, for the watchers to verify; the dashboard's hash field calls this too."""
    net = chain_inputs.network(posted.network, "network")
    tx_hash = chain_inputs.tx_hash(net, posted.tx_hash, "tx_hash")
    token = chain_inputs.token(net, posted.token_address, "token_address")
    order = await owned.order(request, await owned.order_id_of(request, "refund", refund_id))
    # The order's actor decides: the refund's network and state, and whether another refund holds the transfer.
    command = m.SubmitRefundTx(order_id=order.order_id, merchant_id=order.merchant_id, livemode=order.livemode,
                               at=ctx(request).clock(), refund_id=refund_id, network=net.slug, tx_hash=tx_hash,
                               token_address=token)
    order = await submit(request, ids_of(request), command)
    await audit_trail.record(request, "refund.transaction_submitted", object_id=refund_id, order_id=order.order_id,
                             details={"network": net.slug, "tx_hash": tx_hash})
    pool = ctx(request).pool
    tx = next(t for t in await transactions(pool, refund_id) if (t.network, t.tx_hash) == (net.slug, tx_hash))
    return refund_json(ctx(request).settings, order, order.refund(refund_id), contract.RefundSubmitted,
                       verification=tx)


ROUTES = [
    Route("POST", "/refunds/{refund_id}/submit-tx", submit_tx,
          "Post the refund transfer's hash; it is verified on-chain and the refund becomes EXECUTED at depth",
          bodies.SubmitTxIn, 202, response=contract.RefundSubmitted),
]
