"""What a request names on a chain (network, address, stablecoin, transaction hash, refund destination), checked
against the network registry and the family's own rules."""

from __future__ import annotations

from actors.messages import Destination
from actors.rules import CARD
from actors.views import OrderView
from cards import amounts
from chain_watchers import (
    InvalidAddress,
    InvalidTxHash,
    Network,
    UnknownNetwork,
    UnknownToken,
)
from chain_watchers.registry import adapter_class
from web.api.commands import amount
from web.api.modes import require_testnet
from web.edge.errors import ApiError
from web.reads.networks import registry


def network(slug: str, param: str) -> Network:
    try:
        return registry().network(slug)
    except UnknownNetwork:
        raise ApiError(422, "unknown_network", f"`{param}` {slug!r} is not a network this service knows.", param) from None


def address(net: Network, value: str, param: str) -> str:
    try:
        return adapter_class(net.family).validate_address(value)
    except InvalidAddress as exc:
        raise ApiError(422, "invalid_address", f"`{param}` is not a valid {net.slug} address: {exc}", param) from None


def token(net: Network, value: str, param: str) -> str:
    """The stablecoin's address in normal form; anything else on that network is refused."""
    adapter = adapter_class(net.family)
    try:
        return adapter.validate_address(adapter.stablecoin(net, value).address)
    except (InvalidAddress, UnknownToken):
        known = ", ".join(f"{c.symbol} {c.address}" for c in net.stablecoins) or "none"
        raise ApiError(422, "unknown_token", f"`{param}` is not a known stablecoin on {net.slug} (known: {known}).",
                       param) from None


def tx_hash(net: Network, value: str, param: str) -> str:
    try:
        return adapter_class(net.family).validate_tx_hash(value)
    except InvalidTxHash as exc:
        raise ApiError(422, "invalid_tx_hash", f"`{param}` is not a {net.slug} transaction hash: {exc}", param) from None


# A card refund goes back to the card it was paid with: the provider routes it, and the destination fields, which
# are for chains, are ignored (docs/spec.md §2.3).
CARD_DESTINATION = Destination(refund_to_address="", refund_network=CARD, refund_token_address="")


def card_paid(order: OrderView) -> bool:
    """Paid, and only by card: the buyer's refund form then asks for no destination."""
    return bool(order.payments) and all(p.network == CARD for p in order.payments)


def refund_amount(destination: Destination, text: str) -> int:
    """A refund's `amount` in micro-dollars. A card refund is sent to the provider in cents: a finer amount is
    refused, never rounded."""
    micros = amount(text, "amount")
    if destination.refund_network == CARD:
        try:
            amounts.refund_cents(micros)
        except amounts.NotWholeCents as exc:
            raise ApiError(422, "invalid_amount", f"`amount` is not whole cents: {exc}.", "amount") from None
    return micros


def refund_destination(to_address: str, network_slug: str, token_address: str, livemode: bool) -> Destination:
    """A refund's destination in normal form, each part refused under its own field name; a test-mode refund is
    sent on a test network only."""
    net = network(network_slug, "refund_network")
    require_testnet(livemode, net, "refund_network")
    return Destination(
        refund_to_address=address(net, to_address, "refund_to_address"),
        refund_network=net.slug,
        refund_token_address=token(net, token_address, "refund_token_address"),
    )
