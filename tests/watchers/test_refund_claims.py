"""One writer for refund transfers: the order's actor claims a posted transfer when it applies the command, so an
answer the merchant never got (a 504) loses nothing, and one transfer never pays two refunds, even when posted for
both at once."""

from __future__ import annotations

import asyncio

from web.edge.app_state import CONTEXT


async def _until_listed(shop, refund_id: str, deadline_s: float = 10.0) -> list[dict]:
    """The actor applies the command after the web stopped waiting: the transfer shows once it has."""
    loop = asyncio.get_running_loop()
    until = loop.time() + deadline_s
    while not (transactions := (await shop.read_refund(refund_id))["transactions"]):
        assert loop.time() < until, "the posted transfer never reached the refund"
        await asyncio.sleep(0.05)
    return transactions


async def test_a_transfer_whose_answer_timed_out_is_still_verified_and_executed(shop, monkeypatch) -> None:
    order_id = (await shop.paid("10.00"))["order_id"]
    refund_id = await shop.refund(order_id, "4.00")
    tx_hash = await shop.send(shop.wallet, shop.buyer, "4.00")
    bus = shop.stack.server.app[CONTEXT].bus
    monkeypatch.setattr(bus, "timeout_s", 0.001)  # the web gives up long before any actor can answer
    status, body = await shop.client.post(f"/b2b/v1/refunds/{refund_id}/submit-tx",
                                          {"network": "local", "tx_hash": tx_hash,
                                           "token_address": shop.chain.token.address})
    assert (status, body["error"]["code"]) == (504, "command_timeout"), body
    monkeypatch.undo()

    [tx] = await _until_listed(shop, refund_id)
    assert (tx["tx_hash"], tx["status"]) == (tx_hash, "verifying")
    await shop.mine(shop.network.confirmations)
    assert (await shop.tick()).refunds == 1
    refund = await shop.read_refund(refund_id)
    assert (refund["status"], refund["execution"]["tx_hash"]) == ("EXECUTED", tx_hash)
    assert [t["status"] for t in refund["transactions"]] == ["executed"]
    assert (await shop.events(order_id)).count("payment.refund.executed") == 1
    # The merchant's retry of the request that timed out is answered from the state, not refused.
    again = await shop.submit(refund_id, tx_hash)
    assert (again["status"], again["verification"]["status"]) == ("EXECUTED", "executed")


async def test_one_transfer_posted_for_two_refunds_at_once_pays_only_one(shop) -> None:
    refund_ids = [await shop.refund((await shop.paid("5.00"))["order_id"], "5.00") for _ in range(2)]
    tx_hash = await shop.send(shop.wallet, shop.buyer, "5.00")
    answers = await asyncio.gather(*[
        shop.client.post(f"/b2b/v1/refunds/{refund_id}/submit-tx",
                         {"network": "local", "tx_hash": tx_hash, "token_address": shop.chain.token.address})
        for refund_id in refund_ids])
    assert sorted(status for status, _ in answers) == [202, 409], answers
    [(refused, body)] = [(r, b) for r, (s, b) in zip(refund_ids, answers) if s == 409]
    assert (body["error"]["code"], body["error"]["param"]) == ("tx_hash_already_used", "tx_hash")
    assert (await shop.read_refund(refused))["transactions"] == []
    rows = await shop.stack.pool.fetch("SELECT refund_id FROM refund_transactions WHERE tx_hash = $1", tx_hash)
    assert [r["refund_id"] for r in rows] == [r for r in refund_ids if r != refused]
