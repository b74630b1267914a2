"""The shipped network registry and its loader: every network sound, environment expansion, operator mistakes caught."""

from __future__ import annotations

import pathlib

import msgspec
import pytest

from chain_watchers.base import UnknownToken
from chain_watchers.evm import EvmAdapter
from chain_watchers.registry import (
    DEFAULT_FILE,
    FAMILIES,
    UnknownNetwork,
    adapter_class,
    load_registry,
    parse_registry,
)
from chain_watchers.solana import SolanaAdapter
from chain_watchers.ton import TonAdapter
from chain_watchers.tron import TronAdapter

ADAPTERS = {"evm": EvmAdapter, "solana": SolanaAdapter, "tron": TronAdapter, "ton": TonAdapter}
SHIPPED = load_registry(DEFAULT_FILE, env={})

# (slug, chain id or None, testnet, {symbol: decimals}): what the shipped file must say.
EXPECTED = [
    ("ethereum", 1, False, {"USDT": 6, "USDC": 6}),
    ("sepolia", 11155111, True, {"USDC": 6, "USDT": 6}),
    ("polygon", 137, False, {"USDT": 6, "USDC": 6, "USDC.e": 6}),
    ("amoy", 80002, True, {"USDC": 6}),
    ("bsc", 56, False, {"USDT": 18, "USDC": 18}),
    ("bsc-testnet", 97, True, {"USDT": 18, "USDC": 18}),
    ("arbitrum", 42161, False, {"USDT": 6, "USDC": 6}),
    ("arbitrum-sepolia", 421614, True, {"USDC": 6}),
    ("base", 8453, False, {"USDC": 6}),
    ("base-sepolia", 84532, True, {"USDC": 6}),
    ("optimism", 10, False, {"USDT": 6, "USDC": 6}),
    ("optimism-sepolia", 11155420, True, {"USDC": 6}),
    ("solana", None, False, {"USDC": 6, "USDT": 6}),
    ("solana-devnet", None, True, {"USDC": 6}),
    ("tron", None, False, {"USDT": 6}),
    ("tron-nile", None, True, {"USDT": 6}),
    ("ton", None, False, {"USDT": 6}),
    ("ton-testnet", None, True, {"USDT": 6}),
    ("local", 131277322940537, True, {}),
]


@pytest.mark.parametrize(("slug", "chain_id", "testnet", "coins"), EXPECTED, ids=[row[0] for row in EXPECTED])
def test_shipped_network(slug: str, chain_id: int | None, testnet: bool, coins: dict[str, int]) -> None:
    network = SHIPPED.network(slug)
    assert (network.chain_id, network.testnet) == (chain_id, testnet)
    assert {coin.symbol: coin.decimals for coin in network.stablecoins} == coins
    adapter = ADAPTERS[network.family]
    for coin in network.stablecoins:
        assert adapter.validate_address(coin.address)  # checksums catch a mistyped address
    assert network.rpc_url.startswith("http")


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_names_its_adapter_once(family: str) -> None:
    assert set(ADAPTERS) == set(FAMILIES)
    assert adapter_class(family) is ADAPTERS[family]


def test_shipped_registry_has_exactly_the_expected_networks() -> None:
    assert SHIPPED.slugs == tuple(row[0] for row in EXPECTED)


def test_explorer_link_substitutes_the_hash() -> None:
    assert SHIPPED.network("tron").explorer_url("ab" * 32) == "https://tronscan.org/#/transaction/" + "ab" * 32
    assert SHIPPED.network("local").explorer_url("0x" + "ab" * 32) is None
    # A hash the test helpers made up is on no chain: no link to an explorer that would not find it.
    assert SHIPPED.network("ethereum").explorer_url("test_0192ab" + "cd" * 16) is None


def test_environment_fills_rpc_urls_and_the_local_token() -> None:
    env = {"ETHEREUM_RPC_URL": "https://rpc.example/key123", "LOCAL_TESTUSD_ADDRESS": "0x" + "11" * 20}
    registry = load_registry(DEFAULT_FILE, env=env)
    assert registry.network("ethereum").rpc_url == "https://rpc.example/key123"
    assert [coin.address for coin in registry.network("local").stablecoins] == ["0x" + "11" * 20]


def test_networks_file_variable_picks_another_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "networks.toml"
    path.write_text(
        '[networks.devchain]\nfamily = "evm"\nchain_id = 5\nrpc_url = "http://x"\nconfirmations = 2\ntestnet = true\n'
    )
    assert load_registry(env={"NETWORKS_FILE": str(path)}).slugs == ("devchain",)


@pytest.mark.parametrize("livemode,present,absent", [(False, {"sepolia", "local", "tron-nile"}, {"ethereum", "tron"}),
                                                      (True, {"ethereum", "tron", "ton"}, {"sepolia", "local"})])
def test_a_mode_sees_its_own_networks(livemode: bool, present: set[str], absent: set[str]) -> None:
    slugs = {network.slug for network in load_registry().of_mode(livemode)}
    assert present <= slugs and not absent & slugs


def test_every_shipped_network_names_its_block_time_and_only_evm_ones_a_websocket() -> None:
    timed = {n.slug for n in SHIPPED.networks if n.block_time_s is not None}
    assert timed == set(SHIPPED.slugs) - {"local"}  # the in-process chain mines a block per transaction
    assert {n.family for n in SHIPPED.networks if n.ws_url} == {"evm"}
    assert load_registry(env={"POLYGON_WS_URL": "wss://polygon.example"}).network("polygon").ws_url == (
        "wss://polygon.example")


def test_unknown_slug_is_refused() -> None:
    with pytest.raises(UnknownNetwork):
        SHIPPED.network("dogecoin")


MISTAKES = [
    # (the network's own lines, besides rpc_url and testnet; what the error must name)
    ('family = "evm"\nconfirmations = 1', "chain_id"),
    ('family = "solana"\nchain_id = 1\nconfirmations = 1', "chain_id"),
    ('family = "evm"\nchain_id = 1\nconfirmations = 0', "confirmations"),
    ('family = "bitcoin"\nconfirmations = 1', "family"),
    ('family = "tron"\nconfirmation = 1', "confirmation"),
    ('family = "tron"\nconfirmations = 1\nnote = "${NOT_SET}"', "NOT_SET"),
    ('family = "tron"\nconfirmations = 1\nstablecoins = [{ symbol = "USDT", address = "T", decimals = 99 }]', "decimals"),
    ('family = "solana"\nconfirmations = 1\nws_url = "wss://x"', "ws_url"),
    ('family = "evm"\nchain_id = 1\nconfirmations = 1\nblock_time_s = 0', "block_time_s"),
]


@pytest.mark.parametrize(
    ("lines", "message"),
    MISTAKES,
    ids=["evm-without-chain-id", "chain-id-off-evm", "zero-confirmations", "unknown-family", "misspelt-field",
         "unset-variable", "decimals-out-of-range", "websocket-off-evm", "zero-block-time"],
)
def test_operator_mistakes_are_refused(lines: str, message: str) -> None:
    toml = f'[networks.x]\nrpc_url = "http://x"\ntestnet = false\n{lines}\n'
    with pytest.raises((msgspec.ValidationError, ValueError), match=message):
        parse_registry(toml, env={})


def test_stablecoin_lookup_compares_normal_forms_without_a_client() -> None:
    ethereum, ton = SHIPPED.network("ethereum"), SHIPPED.network("ton")
    assert EvmAdapter.stablecoin(ethereum, "0xdac17f958d2ee523a2206206994597c13d831ec7").symbol == "USDT"
    assert TonAdapter.stablecoin(ton, "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs").symbol == "USDT"
    with pytest.raises(UnknownToken):
        EvmAdapter.stablecoin(ethereum, "0x" + "11" * 20)
