"""Refunds (docs/spec.md §2.3, §3.1, §4.1): merchant and customer flows, review, cancel, reads."""

from __future__ import annotations

from aiohttp import web

from accounts import merchants
from actors import messages as m
from actors.rules import CARD
from contract import api as contract
from web.api import audit_trail, bodies, chain_inputs
from web.api.answers import refund_json, respond
from web.api.commands import body, ids_of, made_by, submit
from web.api.handlers import refund_transactions
from web.api.handlers.merchants import own_merchant_id
from web.api.route import Route
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError
from web.reads import owned

REFUND_LIST = contract.page_of(contract.Refund)
# What the audit log calls each review (a retry sends an approved refund again: no new decision, no row).
REVIEW_ACTIONS = {m.ApproveRefund: "refund.approved", m.RejectRefund: "refund.rejected",
                  m.CancelRefund: "refund.canceled", m.RetryRefund: "refund.retried"}


async def _create(request: web.Request, kind: type[bodies.RefundIn], flow: str) -> web.Response:
    merchant_id = own_merchant_id(request)
    return respond(await create(request, merchant_id, await body(request, kind), flow), status=201)


async def _destination(request: web.Request, refund_in: bodies.RefundIn) -> m.Destination:
    """The refund's destination; a network or token left out is taken from the order's payment."""
    network, token = refund_in.refund_network, refund_in.refund_token_address
    if network != CARD and (network is None or token is None):
        paid = await owned.order(request, refund_in.order_id)
        payment = next((p for p in paid.payments if network is None or p.network == network), None)
        if payment is None:
            field = "refund_network" if network is None else "refund_token_address"
            raise ApiError(422, "missing_field", f"`{field}` is required: no payment of this order to take it from.",
                           field)
        network, token = network or payment.network, token or payment.token_address
    if network == CARD:
        return chain_inputs.CARD_DESTINATION
    if refund_in.refund_to_address is None:
        raise ApiError(422, "missing_field", "`refund_to_address` is required for a refund paid on chain.",
                       "refund_to_address")
    return chain_inputs.refund_destination(refund_in.refund_to_address, network, token, caller(request).livemode)


async def create(request: web.Request, merchant_id: str, refund_in: bodies.RefundIn, flow: str) -> dict:
    """The refund as the API answers it; the dashboard's Issue Refund calls this too."""
    ids, api_key = ids_of(request), caller(request)
    # Only a customer's refund may be approved by the merchant's standing choice: a merchant's own needs no read.
    auto_approve = flow == "customer" and (
        await merchants.settings(ctx(request).pool, merchant_id)).auto_approve_customer_refunds
    destination = await _destination(request, refund_in)
    micros = chain_inputs.refund_amount(destination, refund_in.amount)
    command = m.CreateRefund(
        order_id=refund_in.order_id, merchant_id=merchant_id, livemode=api_key.livemode, at=ctx(request).clock(),
        refund_id=ids.make("re", "refund"), link_token=ids.make("rl", "link_token", 16), amount=micros,
        reason=refund_in.reason, flow=flow,
        destination=destination,
        auto_approve=auto_approve,
        note=getattr(refund_in, "note", None),
    )
    order = await submit(request, ids, command)
    refund = refund_json(ctx(request).settings, order,
                         order.refund(made_by(command.refund_id, [r.refund_id for r in order.refunds])))
    await audit_trail.record(request, "refund.issued", object_id=refund.refund_id, order_id=order.order_id,
                             details={"amount": refund.amount, "flow": flow, "status": refund.status})
    return refund


@audit_trail.records("refund.issued")
async def create_refund(request: web.Request) -> web.Response:
    return await _create(request, bodies.RefundIn, "merchant")


@audit_trail.records("refund.issued")
async def create_customer_refund(request: web.Request) -> web.Response:
    return await _create(request, bodies.CustomerRefundIn, "customer")


async def get_refund(request: web.Request) -> web.Response:
    refund_id = request.match_info["refund_id"]
    order = await owned.order(request, await owned.order_id_of(request, "refund", refund_id))
    txs = await refund_transactions.transactions(ctx(request).pool, refund_id)
    return respond(refund_json(ctx(request).settings, order, order.refund(refund_id), contract.RefundRead,
                               transactions=txs))


async def list_order_refunds(request: web.Request) -> web.Response:
    order = await owned.order(request, request.match_info["order_id"])
    data = [refund_json(ctx(request).settings, order, r) for r in order.refunds]
    return respond(REFUND_LIST(data=data, has_more=False))


async def review(request: web.Request, make) -> dict:
    """Approve, reject or cancel the path's refund with the command make(request, common) builds."""
    refund_id = request.match_info["refund_id"]
    order_id = await owned.order_id_of(request, "refund", refund_id)
    ids, api_key = ids_of(request), caller(request)
    common = dict(order_id=order_id, merchant_id=api_key.merchant_id, livemode=api_key.livemode,
                  at=ctx(request).clock(), refund_id=refund_id)
    command = await make(request, common)
    order = await submit(request, ids, command)
    if type(command) in REVIEW_ACTIONS:
        await audit_trail.record(request, REVIEW_ACTIONS[type(command)], object_id=refund_id, order_id=order_id,
                                 details={"reason": command.reason} if isinstance(command, m.RejectRefund) else None)
    return refund_json(ctx(request).settings, order, order.refund(refund_id))


async def _approve(request, common):
    await body(request, bodies.CancelIn)
    return m.ApproveRefund(**common)


async def _reject(request, common):
    return m.RejectRefund(**common, reason=(await body(request, bodies.RejectIn)).reason)


async def _cancel(request, common):
    await body(request, bodies.CancelIn)
    return m.CancelRefund(**common)


async def _retry(request, common):
    await body(request, bodies.CancelIn)
    return m.RetryRefund(**common)


@audit_trail.records("refund.retried")
async def retry_refund(request: web.Request) -> web.Response:
    return respond(await review(request, _retry))


@audit_trail.records("refund.approved")
async def approve_refund(request: web.Request) -> web.Response:
    return respond(await review(request, _approve))


@audit_trail.records("refund.rejected")
async def reject_refund(request: web.Request) -> web.Response:
    return respond(await review(request, _reject))


@audit_trail.records("refund.canceled")
async def cancel_refund(request: web.Request) -> web.Response:
    return respond(await review(request, _cancel))


ROUTES = [
    Route("POST", "/merchants/{merchant_id}/refunds", create_refund,
          "Merchant-initiated refund, created APPROVED", bodies.RefundIn, 201, response=contract.Refund),
    Route("POST", "/merchants/{merchant_id}/customer-refunds", create_customer_refund,
          "A refund recorded on the customer's behalf: PENDING, or APPROVED when auto-approved",
          bodies.CustomerRefundIn, 201, response=contract.Refund),
    Route("GET", "/refunds/{refund_id}", get_refund, "Read a refund", response=contract.RefundRead),
    Route("GET", "/orders/{order_id}/refunds", list_order_refunds, "The refunds of an order", response=REFUND_LIST),
    Route("POST", "/refunds/{refund_id}/approve", approve_refund, "Approve a PENDING refund", bodies.CancelIn, response=contract.Refund),
    Route("POST", "/refunds/{refund_id}/reject", reject_refund, "Reject a PENDING refund", bodies.RejectIn, response=contract.Refund),
    Route("POST", "/refunds/{refund_id}/cancel", cancel_refund,
          "Cancel an APPROVED refund before execution (it ends REJECTED)", bodies.CancelIn, response=contract.Refund),
    Route("POST", "/refunds/{refund_id}/retry", retry_refund,
          "Send an APPROVED card refund the provider refused to the provider again", bodies.CancelIn,
          response=contract.Refund),
]
