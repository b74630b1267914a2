"""What a buyer can pay with: per accepted network and stablecoin, the exact amount, the address and the wallet link."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache

import eth_abi
import msgspec
from pytoniq_core import Address

from chain_watchers import (
    InvalidAddress,
    InvalidAmount,
    Network,
    Registry,
    to_base_units,
)
from chain_watchers.references import reference
from chain_watchers.registry import adapter_class
from common import money
from common.network_names import network_name

log = logging.getLogger(__name__)
TRANSFER_SELECTOR = bytes.fromhex("a9059cbb")  # keccak("transfer(address,uint256)")[:4]


class Quote(msgspec.Struct, frozen=True, kw_only=True):
    network: str
    network_name: str
    family: str
    chain_id: int | None
    symbol: str
    token_address: str
    amount: str  # token units, equal to the USD amount (1 token = 1 USD)
    base_units: int
    address: str  # the merchant's receive address, in the form the family's wallets show
    link: str | None  # wallet deep link for the QR code; None where the network has no standard (TRON)
    transfer_data: str | None  # EVM: ERC-20 transfer calldata a connected wallet sends to token_address


def shown_address(network: Network, normal: str) -> str:
    """TON addresses are stored raw (0:<hex>), which wallets do not show: give the user-friendly form instead,
    non-bounceable like the payment link's, so a wallet that is not deployed yet still receives."""
    if network.family != "ton":
        return normal
    return Address(normal).to_str(is_user_friendly=True, is_url_safe=True, is_bounceable=False,
                                  is_test_only=network.testnet)


@lru_cache(maxsize=64)
def _link_adapter(network: Network):
    # payment_link and validate_address need the network, not a client: no connection is opened here.
    return adapter_class(network.family)(network, None)


def _transfer_data(to_address: str, units: int) -> str:
    return "0x" + (TRANSFER_SELECTOR + eth_abi.encode(["address", "uint256"], [to_address, units])).hex()


def accepted(registry: Registry, livemode: bool, receive_addresses: Mapping[str, str]) -> list[tuple[Network, str]]:
    """(network, receive address in normal form) a session can be paid on: mainnets when live, testnets in test mode."""
    found = []
    for network in registry.of_mode(livemode):
        address = receive_addresses.get(network.slug)
        if address is None:
            continue
        try:
            found.append((network, _link_adapter(network).validate_address(address)))
        except InvalidAddress as exc:
            # Showing a mistyped address would lose the buyer's money: leave the network out and say why.
            log.warning("receive address for %s is invalid, network not offered: %s", network.slug, exc)
    return found


def quotes(registry: Registry, livemode: bool, receive_addresses: Mapping[str, str], due: int, session_id: str,
           amounts: Mapping[str, int] | None = None) -> list[Quote]:
    """Every payable (network, stablecoin), in registry order. `due` is micro-USD; `amounts` overrides it per
    network with the session's unique amount (chain_watchers.unique_amounts) where the chain needs one."""
    found = []
    for network, address in accepted(registry, livemode, receive_addresses):
        adapter = _link_adapter(network)
        amount = money.format((amounts or {}).get(network.slug, due))
        for coin in network.stablecoins:
            try:
                units = to_base_units(amount, coin.decimals)
            except InvalidAmount:
                continue  # finer than the token can carry
            found.append(Quote(
                network=network.slug, network_name=network_name(network.slug), family=network.family,
                chain_id=network.chain_id, symbol=coin.symbol, token_address=coin.address, amount=amount,
                base_units=units, address=shown_address(network, address),
                link=adapter.payment_link(address, coin.address, units, reference(network, session_id)),
                transfer_data=_transfer_data(address, units) if network.family == "evm" else None,
            ))
    return found
