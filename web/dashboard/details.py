"""The details the dashboard shows of networks, transfers and events: names, explorer links, payment links,
summaries."""

from __future__ import annotations

from typing import Any

from pytoniq_core import Address

from actors.rules import CARD
from chain_watchers import InvalidAmount, Network, UnknownToken, to_base_units
from chain_watchers.registry import adapter_class
from common import money
from common.network_names import network_name
from web.pages.quotes import shown_address
from web.reads import networks
from web.reads.networks import symbol  # noqa: F401 (the templates show it beside the names)

# The event fields worth a glance in the timeline, in this order; amounts are micro-USD.
_EVENT_FIELDS = ("amount", "amount_paid", "amount_due", "refund_id", "token", "new_token", "source", "flow", "network",
                 "tx_hash", "reason", "customer_note")
_AMOUNTS = {"amount", "amount_paid", "amount_due"}


def name(slug: str) -> str:
    return network_name(slug)


def explorer(slug: str, tx_hash: str) -> str | None:
    net = networks.network(slug)
    return net.explorer_url(tx_hash) if net else None


def destination_options(livemode: bool, card: bool = False) -> list[dict[str, str]]:
    """Every (network, stablecoin) of this mode for the refund form: testnets in test mode, mainnets in live; first
    the card the order was paid with, when it was (the provider routes that refund, no address needed)."""
    back_to_card = [{"value": f"{CARD}|", "label": "Back to the card (the card provider routes it)"}] if card else []
    return back_to_card + [{"value": f"{net.slug}|{coin.address}", "label": f"{coin.symbol} on {name(net.slug)}"}
                           for net in networks.registry().of_mode(livemode) for coin in net.stablecoins]


def receive_networks(livemode: bool) -> tuple[Network, ...]:
    return networks.registry().of_mode(livemode)


def _token_shown(net: Network, token_address: str) -> str:
    """TON jetton masters are stored raw (0:<hex>); wallets and explorers show them user-friendly and bounceable."""
    if net.family != "ton":
        return token_address
    return Address(token_address).to_str(is_user_friendly=True, is_url_safe=True, is_bounceable=True,
                                         is_test_only=net.testnet)


def payout(slug: str, to_address: str, token_address: str, amount: int) -> dict[str, Any]:
    """The transfer a refund asks the merchant to send: shown addresses, token units, and the wallet link (None on
    TRON, whose wallets share no payment link standard, and wherever the amount or token cannot be expressed)."""
    net = networks.network(slug)
    if net is None:
        return {"family": None, "address": to_address, "token": token_address, "amount": money.format(amount),
                "link": None}
    adapter = adapter_class(net.family)(net, None)  # links and address forms need no client
    link = None
    try:
        coin = adapter.stablecoin(net, token_address)
        link = adapter.payment_link(to_address, token_address, to_base_units(money.format(amount), coin.decimals))
    except (UnknownToken, InvalidAmount, ValueError):
        pass
    return {"family": net.family, "address": shown_address(net, to_address), "token": _token_shown(net, token_address),
            "amount": money.format(amount), "link": link}


def event_details(data: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for key in _EVENT_FIELDS:
        value = data.get(key)
        if value is None or value == "":
            continue
        shown = money.format(value) if key in _AMOUNTS else name(value) if key == "network" else str(value)
        found.append((key.replace("_", " "), shown))
    destination = data.get("destination")
    if isinstance(destination, dict) and destination.get("refund_to_address"):
        found.append(("to", destination["refund_to_address"]))
    return found
