"""What the edge-case tables of the chain families share: how a row's outcome is read, written and checked, and the
one-transfer-for-two-refunds check."""

from __future__ import annotations

from tests.watchers import api

VERIFIED = ("verified", None)


def paid(status: str, *amounts: str) -> dict:
    """The order's status, the amounts it records (one payment each) and one verified attempt per payment."""
    return {"status": status, "payments": amounts, "verdicts": (VERIFIED,) * len(amounts)}


async def report(stack, session_key: str, network: str, tx_hash: str) -> None:
    """The checkout page posts the hash the buyer's wallet gave it."""
    url = f"{stack.base_url}/c/{session_key}/payment-attempts"
    async with stack.http.post(url, json={"network": network, "tx_hash": tx_hash}) as response:
        assert response.status == 201, await response.text()


async def refund_outcome(merchant, refund_id: str) -> tuple[str, tuple]:
    """The refund's status and the (status, reason) of each transaction posted for it, as the merchant reads them."""
    body = await api.read_refund(merchant, refund_id)
    return body["status"], ((), tuple((t["status"], t["reason"]) for t in body["transactions"]))


def assert_row(outcome: tuple[str, tuple], case) -> None:
    status, (payments, verdicts) = outcome
    assert (status, payments, verdicts) == (case.status, case.payments, tuple(sorted(case.verdicts)))


async def one_transfer_for_two_refunds(merchant, watcher, refunds: list[str], tx_hash: str, network: str,
                                       token: str) -> None:
    """The second refund's claim on a transfer the first already holds is refused; the first is executed by it."""
    first, second = refunds
    await api.submit(merchant, first, tx_hash, network, token)
    status, body = await merchant.post(f"/b2b/v1/refunds/{second}/submit-tx",
                                       {"tx_hash": tx_hash, "network": network, "token_address": token})
    assert (status, body["error"]["code"]) == (409, "tx_hash_already_used")
    await watcher.run_once()
    assert [(await api.read_refund(merchant, r))["status"] for r in (first, second)] == ["EXECUTED", "APPROVED"]
