"""A paid order whose refund's USDC transfer sits on the local Solana cluster and was posted with submit-tx."""

from __future__ import annotations

from solders.keypair import Keypair

from common import money
from tests.chain.fake_solana_rpc import Cluster
from tests.watchers import api

NETWORK = "solana-devnet"
USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"  # Circle's devnet USDC, as networks.toml lists it


def wallet() -> str:
    return str(Keypair().pubkey())


async def refund_on(cluster: Cluster, client, amount: str, depth: int) -> tuple[str, str, str]:
    """(order_id, refund_id, signature): the transfer `depth` slots deep, counting its own."""
    order_id = await api.paid_order(client)
    buyer = wallet()
    refund_id = await api.refund(client, order_id, amount, NETWORK, buyer, USDC)
    signature = cluster.add_transfer(slot=cluster.head - depth + 1, mint=USDC, sender=wallet(), recipient=buyer,
                                     amount=money.parse(amount))
    await api.submit(client, refund_id, signature, NETWORK, USDC)
    return order_id, refund_id, signature
