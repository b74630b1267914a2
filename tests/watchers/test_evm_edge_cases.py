"""EVM edge cases, one table: PaymentToken transfers signed locally and mined by a real JSON-RPC node (ganache), reported
by the checkout page or found by their unique amount, read by the EVM watcher over HTTP, and applied by the order
actor. Each row asserts what the merchant sees through the API; a reorganisation and a refund hash posted twice
follow the table."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from testkit.evm_node import CONFIRMATIONS
from tests.integration.helpers import expire_due
from tests.watchers import api
from tests.watchers.ganache_shop import SLUG, Ganache, GanacheShop, ganache_network


@dataclass(frozen=True)
class Pay:
    amount: str  # in the token's units
    to: str = "wallet"  # wallet (the merchant's receive address), buyer (a refund's address) or stranger
    token: str = "usdt"
    times: int = 1  # Transfer logs of `amount` in one transferMany to the same address
    fail: bool = False  # signed by a key holding none of the token: the transaction reverts
    later: bool = False  # mined before the other payments, reported only after a first tick


@dataclass(frozen=True)
class Case:
    kind: str  # "payment": reported by the page (found by its unique amount when expired); "refund": a 10.00 refund
    pays: tuple[Pay, ...]
    status: str  # the order's status (payment) or the refund's (refund)
    payments: tuple[tuple[str, bool], ...] = ()  # (amount, late) of each payment the order records
    verdicts: tuple[tuple[str, str | None], ...] = ()  # (status, reason) of each attempt or refund transaction
    one_block: bool = False  # every transfer mined in the same block
    expired: bool = False  # the session expires (its order is canceled) before the buyer pays


VERIFIED = ("verified", None)
FAILED = "the transaction failed on chain (failed: reverted (receipt status 0))"
CASES = {
    "exact payment": Case("payment", (Pay("10.00"),), "PAID", (("10.00", False),), (VERIFIED,)),
    # docs/watchers.md: what arrives in one transaction is summed (one payment), whatever its number of logs.
    "two Transfer logs of 5.00 to the wallet in one transaction are one payment of 10.00":
        Case("payment", (Pay("5.00", times=2),), "PAID", (("10.00", False),), (VERIFIED,)),
    "two payments to one session in one block":
        Case("payment", (Pay("5.00"), Pay("5.00")), "PAID", (("5.00", False), ("5.00", False)), (VERIFIED, VERIFIED),
             one_block=True),
    "out of order: the older transaction is reported after the newer one was credited":
        Case("payment", (Pay("4.00", later=True), Pay("6.00")), "PAID", (("6.00", False), ("4.00", False)),
             (VERIFIED, VERIFIED)),
    "overpayment is recorded in full": Case("payment", (Pay("12.00"),), "PAID", (("12.00", False),), (VERIFIED,)),
    "underpayment leaves the rest due": Case("payment", (Pay("7.00"),), "PARTIAL_PAID", (("7.00", False),),
                                             (VERIFIED,)),
    "payment after the session expired is recorded on the canceled order (late)":
        Case("payment", (Pay("10.00"),), "CANCELED", (("10.00", True),), (VERIFIED,), expired=True),
    "a look-alike token named USDT pays nothing":
        Case("payment", (Pay("10.00", token="lookalike"),), "PENDING", (),
             (("rejected", f"moved no stablecoin accepted on {SLUG}"),)),
    "a fee-on-transfer token credits what arrived":
        Case("payment", (Pay("10.00", token="fee"),), "PARTIAL_PAID", (("9.90", False),), (VERIFIED,)),
    "an 18-decimal token pays to the micro-dollar, dust below it dropped":
        Case("payment", (Pay("10.000000000000000001", token="usdt18"),), "PAID", (("10.00", False),), (VERIFIED,)),
    "a transaction that reverted on chain pays nothing":
        Case("payment", (Pay("10.00", fail=True),), "PENDING", (), (("rejected", FAILED),)),
    "refund transfer executes the refund": Case("refund", (Pay("10.00", to="buyer"),), "EXECUTED", (),
                                                (("executed", None),)),
    "refund paid in full to the wrong address": Case("refund", (Pay("10.00", to="stranger"),), "APPROVED", (),
                                                     (("failed", ("sent USDT to {stranger}, not to the refund "
                                                                  "address {buyer}")),)),
    "refund transfer that reverted on chain": Case("refund", (Pay("10.00", to="buyer", fail=True),), "APPROVED", (),
                                                   (("failed", FAILED),)),
    "refund through a fee-on-transfer token arrives short":
        Case("refund", (Pay("10.00", to="buyer", token="fee"),), "APPROVED", (),
             (("failed", "moved 9.9 USDF to the refund address, less than the 10 owed"),)),
}


@pytest.fixture(scope="module")
async def ganache() -> AsyncIterator[Ganache]:
    async with ganache_network() as node:
        yield node


@pytest.fixture
async def shop(stack, merchant, watchers, ganache: Ganache) -> GanacheShop:
    return await GanacheShop(stack, merchant, ganache, watchers).start()


async def send(shop: GanacheShop, pays: tuple[Pay, ...], one_block: bool = False, refund: bool = False) -> list[str]:
    """Sign and mine the transfers (the buyer pays, the merchant's wallet refunds) and bury them at the required depth."""
    payer = shop.wallet if refund else shop.buyer
    addresses = {"wallet": shop.wallet.address, "buyer": shop.buyer.address, "stranger": shop.stranger.address}
    if one_block:
        await shop.chain.hold_blocks()
    hashes, nonces = [], {}
    for p in pays:
        sender = shop.stranger if p.fail else payer
        # Counted here: with blocks held, ganache's "pending" count does not see the transactions already sent.
        if sender.address not in nonces:
            nonces[sender.address] = await shop.chain.w3.eth.get_transaction_count(sender.address)
        hashes.append(await shop.pay(p.amount, to=addresses[p.to], token=p.token, times=p.times, sender=sender,
                                     nonce=nonces[sender.address]))
        nonces[sender.address] += 1
    if one_block:
        await shop.chain.mine(1)
        await shop.chain.release_blocks()
        receipts = [await shop.chain.w3.eth.get_transaction_receipt(h) for h in hashes]
        assert len({r["blockNumber"] for r in receipts}) == 1
    await shop.chain.mine(CONFIRMATIONS)
    return hashes


async def pay(shop: GanacheShop, case: Case) -> tuple[str, tuple, tuple]:
    created = await shop.checkout("10.00", ttl_seconds=60)
    if case.expired:
        # The page quoted the session its amount while it was open; the buyer pays it after the session ended.
        assert await api.unique_amount(shop.stack.pool, shop.client, created, SLUG, shop.wallet.address) == 10_000_000
        await expire_due(shop.stack, 120)
    hashes = await send(shop, case.pays, case.one_block)
    if not case.expired:
        for p, tx_hash in zip(case.pays, hashes, strict=True):
            if not p.later:
                await shop.report(created["session_key"], tx_hash)
    await shop.tick()
    for p, tx_hash in zip(case.pays, hashes, strict=True):
        if p.later:
            await shop.report(created["session_key"], tx_hash)
            await shop.tick()
    body = await shop.order(created["order_id"])
    return (body["status"], tuple((p["amount"], p["late"]) for p in body["payments"]),
            await shop.attempts(created["session_id"]))


async def refund(shop: GanacheShop, case: Case) -> tuple[str, tuple, tuple]:
    token = shop.node.tokens[case.pays[0].token].address
    order_id = await api.paid_order(shop.client)
    refund_id = await api.refund(shop.client, order_id, "10.00", SLUG, shop.buyer.address, token)
    [tx_hash] = await send(shop, case.pays, refund=True)
    await api.submit(shop.client, refund_id, tx_hash, SLUG, token)
    await shop.tick()
    body = await api.read_refund(shop.client, refund_id)
    return body["status"], (), tuple(sorted((t["status"], t["reason"]) for t in body["transactions"]))


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_edge_case(shop: GanacheShop, case: Case) -> None:
    status, payments, verdicts = await {"payment": pay, "refund": refund}[case.kind](shop, case)
    names = {"stranger": shop.stranger.address, "buyer": shop.buyer.address}
    expected = tuple(sorted((s, r.format(**names) if r else r) for s, r in case.verdicts))
    assert (status, payments, verdicts) == (case.status, case.payments, expected)


async def seen_then_reorganised_away(shop: GanacheShop) -> tuple[dict, bytes, str]:
    """(checkout, signed transaction, hash): a 10.00 payment the watcher saw in a block, which then left the chain."""
    created = await shop.checkout("10.00")
    fork = await shop.chain.snapshot()
    raw = await shop.chain.sign(shop.buyer, shop.node.tokens["usdt"].functions.transfer(shop.wallet.address, 10**7))
    tx_hash = await shop.chain.send_raw(raw)
    await shop.report(created["session_key"], tx_hash)
    await shop.tick()
    seen = await shop.attempt(tx_hash)
    assert (seen["status"], seen["confirmations"]) == ("confirming", 1)
    await shop.chain.revert(fork)
    return created, raw, tx_hash


async def test_a_payment_reorganised_into_another_block_is_credited_once_at_its_new_depth(shop: GanacheShop) -> None:
    """The block holding the payment leaves the chain (evm_revert), the same signed transaction waits in the mempool,
    then lands one block higher: the watcher follows it there and credits it once, at depth counted from there."""
    created, raw, tx_hash = await seen_then_reorganised_away(shop)
    first = await shop.attempt(tx_hash)
    await shop.chain.mine(1)  # the other branch grows a block without the payment
    await shop.chain.hold_blocks()
    assert await shop.chain.send_raw(raw) == tx_hash  # rebroadcast, as nodes return a reorganised block's transactions
    await shop.tick()
    waiting = await shop.attempt(tx_hash)
    assert (waiting["status"], waiting["reason"]) == (
        "confirming", f"back in the mempool after a reorganisation (was in block {first['seen_block']})")

    await shop.chain.release_blocks()  # the node mines what waits, the payment alone, in one block
    for depth in (1, 2):
        await shop.tick()
        moved = await shop.attempt(tx_hash)
        assert (moved["status"], moved["confirmations"], moved["seen_block"]) == (
            "confirming", depth, str(int(first["seen_block"]) + 1))
        assert (await shop.order(created["order_id"]))["status"] == "PENDING"
        await shop.chain.mine(1)
    await shop.tick()
    await shop.tick()  # a later tick finds nothing more to credit
    body = await shop.order(created["order_id"])
    assert (await shop.attempt(tx_hash))["status"] == "verified"
    assert (body["status"], [(p["tx_hash"], p["amount"]) for p in body["payments"]]) == ("PAID", [(tx_hash, "10.00")])


async def test_one_refund_transfer_posted_for_a_second_refund_is_refused(shop: GanacheShop) -> None:
    token = shop.node.tokens["usdt"].address
    first, second = [await api.refund(shop.client, await api.paid_order(shop.client), "10.00", SLUG,
                                      shop.buyer.address, token) for _ in range(2)]
    [tx_hash] = await send(shop, (Pay("10.00", to="buyer"),), refund=True)
    await api.submit(shop.client, first, tx_hash, SLUG, token)
    status, body = await shop.client.post(f"/b2b/v1/refunds/{second}/submit-tx",
                                          {"tx_hash": tx_hash, "network": SLUG, "token_address": token})
    assert (status, body["error"]["code"]) == (409, "tx_hash_already_used")
    await shop.tick()
    assert [(await api.read_refund(shop.client, r))["status"] for r in (first, second)] == ["EXECUTED", "APPROVED"]


async def test_a_payment_missing_for_one_check_during_a_reorganisation_is_still_credited(shop: GanacheShop) -> None:
    """As above, but the node asked in between knows the transaction nowhere (neither block nor mempool), as a
    load-balanced provider's other backend may answer; the same transaction is mined again afterwards."""
    created, raw, tx_hash = await seen_then_reorganised_away(shop)
    first = await shop.attempt(tx_hash)
    await shop.tick()  # the transaction is nowhere on this node
    missing = await shop.attempt(tx_hash)
    assert (missing["status"], missing["reason"]) == ("confirming", (
        f"removed by a chain reorganisation (was in block {first['seen_block']}); waiting for it to be mined again"))
    await shop.chain.send_raw(raw)
    await shop.chain.mine(CONFIRMATIONS)
    await shop.tick()
    body = await shop.order(created["order_id"])
    assert (body["status"], [p["tx_hash"] for p in body["payments"]]) == ("PAID", [tx_hash])
    assert (await shop.attempt(tx_hash))["status"] == "verified"
