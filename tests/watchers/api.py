"""The merchant calls the watcher tests make, on any network: settings, refunds, submit-tx, and reading back."""

from __future__ import annotations

from chain_watchers import unique_amounts
from common import money
from common.clock import utcnow
from testkit.signed import Signed
from tests.integration.helpers import pay, quick

SETTLED = ["order.created", "checkout_session.created", "payment.received", "checkout_session.completed",
           "payment.settled"]  # docs/spec.md §3.3: PENDING -> PAID in one payment


async def paid_order(client: Signed, amount: str = "10.00") -> str:
    """An order paid in full through the test-mode helper (the watchers' own command, without a chain)."""
    order_id = (await quick(client, amount=amount))["order_id"]
    status, body = await pay(client, order_id, amount)
    assert status == 201, body
    return order_id


async def receive_on(client: Signed, network: str, address: str) -> None:
    status, body = await client.patch(f"/b2b/v1/merchants/{client.merchant_id}/settings",
                                      {"receive_addresses": {network: address}})
    assert status == 200, body


async def refund(client: Signed, order_id: str, amount: str, network: str, to: str, token: str) -> str:
    status, body = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refunds", {
        "order_id": order_id, "amount": amount, "reason": "returned", "refund_to_address": to,
        "refund_network": network, "refund_token_address": token})
    assert status == 201, body
    return body["refund_id"]


async def submit(client: Signed, refund_id: str, tx_hash: str, network: str, token: str) -> dict:
    status, body = await client.post(f"/b2b/v1/refunds/{refund_id}/submit-tx",
                                     {"tx_hash": tx_hash, "network": network, "token_address": token})
    assert status == 202, body
    return body


async def read_refund(client: Signed, refund_id: str) -> dict:
    status, body = await client.get(f"/b2b/v1/refunds/{refund_id}")
    assert status == 200, body
    return body


async def events(pool, order_id: str) -> list[str]:
    rows = await pool.fetch("SELECT type FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    return [r["type"] for r in rows]


async def missing_for(pool, network: str, tx_hash: str, minutes: int) -> None:
    """As if the watcher had found the transaction nowhere `minutes` earlier than it did (its clock is the real one)."""
    for table in ("payment_attempts", "refund_transfer_checks"):
        await pool.execute(f"UPDATE {table} SET missing_since = missing_since - make_interval(mins => $3)"
                           " WHERE network = $1 AND tx_hash = $2", network, tx_hash, minutes)


async def unique_amount(pool, client: Signed, session: dict, network: str, address: str) -> int:
    """What the checkout page quotes the session on an EVM or TRON network: its chain_watchers.unique_amounts pick."""
    row = await pool.fetchrow("SELECT order_id, expires_at FROM checkout_sessions WHERE session_id = $1",
                              session["session_id"])
    amounts = await unique_amounts.assign(
        pool, session_id=session["session_id"], order_id=row["order_id"], merchant_id=client.merchant_id,
        livemode=False, due=money.parse(session["amount_due"]), expires_at=row["expires_at"], now=utcnow(),
        targets={network: address})
    return amounts[network]
