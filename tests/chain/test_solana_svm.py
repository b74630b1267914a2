"""The Solana adapter reading transactions the real SPL Token, Token-2022 and ATA programs executed on litesvm."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from solders.keypair import Keypair

from chain_watchers.solana import SolanaAdapter

from .contract import adapter_behind
from .fake_solana_rpc import FINALIZED_DEPTH, Cluster, build_app
from .solana_svm import USDC, USDC_DEVNET, Mint, Transfer, run, serve

TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
MERCHANT = str(Keypair().pubkey())
REFERENCE = str(Keypair().pubkey())
LOOKALIKE = str(Keypair().pubkey())  # another mint with USDC's decimals: on Solana a symbol is only metadata

TRANSFERS = [
    Transfer("paid", 12_500_000, MERCHANT, reference=REFERENCE),
    Transfer("twice", 5_000_000, MERCHANT, times=2),
    Transfer("refused", 3_000_000, MERCHANT, fail=True),
    Transfer("inner", 7_000_000, via="cpi", reference=REFERENCE),
    Transfer("lookalike", 12_500_000, MERCHANT, mint="lookalike"),
]


@pytest.fixture(scope="module")
def executed() -> dict[str, dict]:
    return run(TRANSFERS, (USDC, Mint("lookalike", LOOKALIKE))) | run(
        [Transfer("fee", 10_000_000, MERCHANT)], (Mint("usdc", USDC_DEVNET, "token2022", feeBps=100),))


@pytest.fixture
async def chain() -> AsyncIterator[tuple[Cluster, SolanaAdapter]]:
    cluster = Cluster()
    async with adapter_behind(build_app(cluster), "SOLANA_DEVNET_RPC_URL", "solana-devnet") as adapter:
        assert isinstance(adapter, SolanaAdapter)
        yield cluster, adapter


async def observe(chain: tuple[Cluster, SolanaAdapter], executed: dict):
    cluster, adapter = chain
    return await adapter.fetch(serve(cluster, executed, cluster.head - FINALIZED_DEPTH))


def moved(seen) -> list[tuple[str, str, int]]:
    return [(t.token_address, t.to_address, t.amount_base_units) for t in seen.transfers]


@pytest.mark.parametrize(
    ("name", "success", "credited"),
    [
        ("paid", True, [(USDC_DEVNET, MERCHANT, 12_500_000)]),
        ("twice", True, [(USDC_DEVNET, MERCHANT, 10_000_000)]),  # two instructions, one net movement
        ("refused", False, []),  # the program refused: no balance moved, nothing is credited
        ("lookalike", True, [(LOOKALIKE, MERCHANT, 12_500_000)]),  # reported as what it is: not the stablecoin
        ("fee", True, [(USDC_DEVNET, MERCHANT, 9_900_000)]),  # Token-2022 withheld 1 %: what arrived is what counts
    ],
)
async def test_the_adapter_reports_what_the_token_program_moved(chain, executed, name, success, credited) -> None:
    seen = await observe(chain, executed[name])
    assert (seen.found, seen.success, seen.final) == (True, success, True)  # a refusal is as final as a success
    assert moved(seen) == credited


async def test_a_transfer_made_by_a_cpi_is_found_through_the_balances(chain, executed) -> None:
    record = executed["inner"]
    inner = [i for group in record["result"]["meta"]["innerInstructions"] for i in group["instructions"]]
    assert any(i["programId"] == TOKEN_PROGRAM and i["stackHeight"] == 2 for i in inner)  # really a CPI
    assert record["result"]["transaction"]["message"]["instructions"][0]["programId"] != TOKEN_PROGRAM
    seen = await observe(chain, record)
    assert moved(seen) == [(USDC_DEVNET, record["to"], 7_000_000)]


async def test_the_reference_key_finds_exactly_the_transactions_carrying_it(chain, executed) -> None:
    cluster, adapter = chain
    for name in ("paid", "inner", "twice"):
        serve(cluster, executed[name], cluster.head - FINALIZED_DEPTH)
    found = await adapter.find_by_reference(REFERENCE)
    assert sorted(found) == sorted([executed["paid"]["signature"], executed["inner"]["signature"]])


async def test_the_sender_is_named_when_one_owner_paid(chain, executed) -> None:
    seen = await observe(chain, executed["paid"])
    [transfer] = seen.transfers
    senders = {b["owner"] for b in executed["paid"]["result"]["meta"]["preTokenBalances"] if b["owner"] != MERCHANT}
    assert {transfer.from_address} == senders
