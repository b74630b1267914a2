"""Our payment links read by the parsers wallets use (tests/chain/node/parse_links.mjs): each must give back the
recipient, token, amount and reference that the checkout page shows beside its QR code.

The page test reads a live session's page over HTTP and decodes its QR codes; the table below it runs the adapters'
links through the same parsers for networks, amounts and modes one page cannot show at once.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
import zxingcpp
from PIL import Image, ImageDraw
from tronpy import keys

from chain_watchers import Network, to_base_units
from chain_watchers.references import reference
from chain_watchers.ton import TonAdapter
from tests.e2e.support import receive_addresses
from tests.integration.helpers import QUICK
from web.pages.quotes import quotes
from web.reads.networks import registry

NODE_DIR = Path(__file__).parent / "node"
LIVE = ("ethereum", "bsc", "polygon", "solana", "tron", "ton")
PAGE_AMOUNT = "1234.567891"  # 18-decimal base units above 1e21, where eth-url-parser switches to exponent form


@dataclass(frozen=True)
class Shown:
    """One quote as the buyer sees it: the page's text, and the link its QR code carries (None on TRON)."""

    network: str
    symbol: str
    amount: str
    address: str
    token: str
    link: str | None


def addresses_on(slugs, seed: str = "") -> dict[str, str]:
    """A receive address for each network, taken by family from the e2e merchant's (which names testnets only)."""
    testnet = receive_addresses(seed)
    by_family = {"evm": testnet["sepolia"], "solana": testnet["solana-devnet"], "tron": testnet["tron-nile"],
                 "ton": testnet["ton-testnet"]}
    return {slug: by_family[registry().network(slug).family] for slug in slugs}


def parse(shown: list[Shown]) -> list[dict]:
    """Each quote's link, or on TRON its address and token, through the third-party parsers."""
    items = []
    for quote in shown:
        if quote.link is None:
            items += [{"address": quote.address, "family": "tron"}, {"address": quote.token, "family": "tron"}]
        else:
            items.append({"link": quote.link})
    done = subprocess.run(["node", "parse_links.mjs"], cwd=NODE_DIR, input=json.dumps(items), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    answers = iter(json.loads(done.stdout))
    return [[next(answers), next(answers)] if quote.link is None else next(answers) for quote in shown]


def base_units(text: str, decimals: int) -> int:
    """A parser's amount string in base units, exactly: Decimal reads the exponent form without rounding."""
    value = Decimal(text).scaleb(decimals)
    assert value == value.to_integral_value(), f"{text} is finer than {decimals} decimals"
    return int(value)


def check(network: Network, quote: Shown, answer, session_id: str) -> None:
    decimals = next(c.decimals for c in network.stablecoins if c.symbol == quote.symbol)
    units = to_base_units(quote.amount, decimals)
    assert "error" not in answer, answer
    if network.family == "evm":
        # EIP-681 carries no memo: the unique amount is the session's reference, so it must arrive to the unit.
        assert answer["target_address"] == quote.token and answer["chain_id"] == str(network.chain_id)
        assert answer["function_name"] == "transfer" and set(answer["parameters"]) == {"address", "uint256"}
        assert answer["parameters"]["address"] == quote.address
        assert base_units(answer["parameters"]["uint256"], 0) == units
    elif network.family == "solana":
        assert answer["recipient"] == quote.address and answer["splToken"] == quote.token
        assert base_units(answer["amount"], decimals) == units
        assert answer["reference"] == [reference(network, session_id)] and answer["memo"] is None
    elif network.family == "ton":
        recipient, jetton = answer["recipient"], answer["jetton"]
        assert recipient["raw"] == TonAdapter.validate_address(quote.address)
        # Non-bounceable, so a wallet not yet deployed still receives the notification's TON.
        assert recipient == {**recipient, "bounceable": False, "testOnly": network.testnet}
        assert jetton["raw"] == TonAdapter.validate_address(quote.token) and jetton["testOnly"] == network.testnet
        assert int(answer["amount"]) == units and answer["text"] == session_id
        assert answer["keys"] == ["jetton", "amount", "text"]
    else:
        for shown, read in zip((quote.address, quote.token), answer):
            assert read == {"isAddress": True, "hex": keys.to_hex_address(shown), "base58": shown}


# ---------------------------------------------------------------- the page, as a buyer sees it

_QUOTE = re.compile(r'<details class="quote" name="quote" data-network="([^"]+)" data-symbol="([^"]+)".*?</details>',
                    re.DOTALL)


def decode_qr(block: str) -> str | None:
    """What a phone camera reads from the quote's inline SVG, drawn without a browser: segno writes the dark modules
    as runs of `h` in one path, so M, m and h are all there is to paint."""
    found = re.search(r'<svg viewBox="0 0 (\d+) \1".*?<path stroke="[^"]+" d="([^"]+)"', block, re.DOTALL)
    if found is None:
        return None
    size, scale = int(found.group(1)), 8
    image = Image.new("L", (size * scale, size * scale), 255)
    draw, x, y = ImageDraw.Draw(image), 0.0, 0.0
    for command, a, b in re.findall(r"([A-Za-z])(-?[\d.]+)(?: (-?[\d.]+))?", found.group(2)):
        if command == "M":
            x, y = float(a), float(b)
        elif command == "m":
            x, y = x + float(a), y + float(b)
        elif command == "h":
            top = int(y) * scale
            draw.rectangle([x * scale, top, (x + float(a)) * scale - 1, top + scale - 1], fill=0)
            x += float(a)
        else:
            raise AssertionError(f"segno path command {command!r} is not drawn here")
    codes = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)  # a 1D reader may see bars in it
    assert len(codes) == 1, f"expected one QR code, found {len(codes)}"
    return codes[0].text


def shown_on(html: str) -> list[Shown]:
    shown = []
    for block in _QUOTE.finditer(html):
        text = block.group(0)
        shown.append(Shown(
            network=block.group(1), symbol=block.group(2),
            amount=re.search(r'<span class="num">([^<]+)</span>', text).group(1),
            address=re.search(r'data-testid="address">([^<]+)<', text).group(1),
            token=re.search(r'<code class="value small">([^<]+)</code>', text).group(1),
            link=decode_qr(text),
        ))
    return shown


@pytest.fixture(scope="module")
async def page(stack):
    """The second live session of a merchant receiving on six mainnets: EVM and TRON quote it a unique amount."""
    client = await stack.merchant("Link parsers", livemode=True)
    live = addresses_on(LIVE, client.merchant_id)
    status, body = await client.patch(f"/b2b/v1/merchants/{client.merchant_id}/settings", {"receive_addresses": live})
    assert status == 200, body
    for _ in range(2):
        status, created = await client.post(QUICK, {"amount": PAGE_AMOUNT})
        assert status == 201, created
        async with stack.http.get(f"{stack.base_url}/c/{created['session_key']}") as resp:
            assert resp.status == 200
            html = await resp.text()
    shown = shown_on(html)
    return created, shown, parse(shown)


async def test_the_page_offers_every_mainnet_with_a_qr_code_where_the_network_has_a_link(page):
    _, shown, _ = page
    assert {q.network for q in shown} == set(LIVE)
    assert all((q.link is None) == (q.network == "tron") for q in shown)
    unique = {q.network: q.amount for q in shown}
    # The first session took the plain amount on each (network, address); this one is a micro-dollar above it.
    assert unique == {**{slug: "1234.567892" for slug in ("ethereum", "bsc", "polygon", "tron")},
                      "solana": PAGE_AMOUNT, "ton": PAGE_AMOUNT}


@pytest.mark.parametrize("network, symbol", [
    ("ethereum", "USDT"), ("ethereum", "USDC"), ("bsc", "USDT"), ("bsc", "USDC"), ("polygon", "USDT"),
    ("polygon", "USDC"), ("polygon", "USDC.e"), ("solana", "USDC"), ("solana", "USDT"), ("tron", "USDT"),
    ("ton", "USDT"),
])
async def test_parsers_read_back_what_the_page_shows(page, network, symbol):
    created, shown, answers = page
    [(quote, answer)] = [(q, a) for q, a in zip(shown, answers) if (q.network, q.symbol) == (network, symbol)]
    check(registry().network(network), quote, answer, created["session_id"])


# ---------------------------------------------------------------- the adapters' links, across modes and amounts

@pytest.mark.parametrize("livemode, due", [
    (True, 50_000),  # 0.05: Solana Pay wants the leading zero
    (True, 999_999_999_999_999),  # 999999999.999999: the most significant digits @solana/pay's float64 keeps
    (False, 12_345_678),
    (False, 10_000_000),  # a whole amount: no trailing dot or exponent in any link
])
def test_parsers_read_back_every_quote(livemode, due):
    networks = [network.slug for network in registry().of_mode(livemode) if network.stablecoins]
    offered = quotes(registry(), livemode, addresses_on(networks), due, "cs_test_a-B_9")
    assert {q.network for q in offered} == set(networks)
    shown = [Shown(q.network, q.symbol, q.amount, q.address, q.token_address, q.link) for q in offered]
    for quote, answer in zip(shown, parse(shown)):
        check(registry().network(quote.network), quote, answer, "cs_test_a-B_9")
