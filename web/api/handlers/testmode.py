"""Test-mode helpers: what the chain watchers report, without a chain, through their very commands."""

from __future__ import annotations

from aiohttp import web

from actors import messages as m
from chain_watchers.registry import SIMULATED_TX
from contract import api as contract
from web.api import audit_trail, bodies, chain_inputs
from web.api.answers import order_answer, refund_json, respond
from web.api.commands import amount, body, ids_of, submit
from web.api.modes import require_testnet
from web.api.route import Route
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads import owned


def _test_mode_only(request: web.Request) -> None:
    if caller(request).livemode:
        raise ApiError(403, "test_mode_only", "Test helpers work with test keys only.")


@audit_trail.records_nothing(audit_trail.TEST_HELPER)
async def record_payment(request: web.Request) -> web.Response:
    _test_mode_only(request)
    payment = await body(request, bodies.TestPaymentIn)
    paid = amount(payment.amount, "amount")
    # Only what a watcher could report: a payment on a network or token the registry does not know would make an
    # order PAID that no refund can then pay back.
    net = chain_inputs.network(payment.network, "network")
    require_testnet(False, net, "network")
    token_address = chain_inputs.token(net, payment.token_address, "token_address")
    ids, api_key = ids_of(request), caller(request)
    command = m.ConfirmPayment(
        order_id=request.match_info["order_id"],
        merchant_id=api_key.merchant_id,
        livemode=False,
        at=ctx(request).clock(),
        payment_id=ids.make("pay", "payment"),
        network=net.slug,
        tx_hash=payment.tx_hash or ids.make(SIMULATED_TX, "tx_hash", 16),
        token_address=token_address,
        amount=paid,
    )
    order = await submit(request, ids, command)
    return respond(order_answer(request, order), status=201)


@audit_trail.records_nothing(audit_trail.TEST_HELPER)
async def execute_refund(request: web.Request) -> web.Response:
    """Mark an APPROVED refund EXECUTED as a verified transfer to its destination would."""
    _test_mode_only(request)
    execution = await body(request, bodies.TestRefundExecutionIn)
    refund_id = request.match_info["refund_id"]
    order = await owned.order(request, await owned.order_id_of(request, "refund", refund_id))
    refund = order.refund(refund_id)
    ids = ids_of(request)
    command = m.ConfirmRefundTransfer(
        order_id=order.order_id, merchant_id=order.merchant_id, livemode=False, at=ctx(request).clock(),
        refund_id=refund_id, network=refund.refund_network,
        tx_hash=execution.tx_hash or ids.make(SIMULATED_TX, "refund_tx_hash", 16),
        token_address=refund.refund_token_address,
    )
    order = await submit(request, ids, command)
    return respond(refund_json(ctx(request).settings, order, order.refund(refund_id)))


ROUTES = [
    Route("POST", "/test-helpers/orders/{order_id}/payments", record_payment,
          "Test mode: record a confirmed payment", bodies.TestPaymentIn, 201, response=contract.Order),
    Route("POST", "/test-helpers/refunds/{refund_id}/execute", execute_refund,
          "Test mode: execute an APPROVED refund as a verified transfer would", bodies.TestRefundExecutionIn, response=contract.Refund),
]
