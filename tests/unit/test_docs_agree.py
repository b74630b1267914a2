"""What the documents tell a merchant to send or expect is what the service accepts and does, checked against
the code itself, so the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from chain_watchers import load_registry

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _section(path: Path, heading: str) -> str:
    text = path.read_text()
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def test_the_networks_table_of_the_api_document_is_the_registry():
    rows = [line for line in _section(DOCS / "api.md", "## Networks and tokens").splitlines()
            if line.startswith("| `") and not line.startswith("| `network`")]
    documented = {}
    for row in rows:
        slug, mode, tokens = (cell.strip() for cell in row.strip("|").split("|"))
        documented[slug.strip("`")] = (mode, set(re.findall(r"(\S+) `([^`]+)`", tokens)))
    shipped = {n.slug: ("test" if n.testnet else "live", {(c.symbol, c.address) for c in n.stablecoins})
               for n in load_registry(env={}).networks}
    # The local chain's token is deployed at test time: its address comes from the environment, not the file.
    assert documented["local"] == ("test", {("TUSD", "LOCAL_TESTUSD_ADDRESS")}) and shipped["local"] == ("test", set())
    documented["local"] = shipped["local"]
    assert documented == shipped
