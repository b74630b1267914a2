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


def _source_strings() -> set[str]:
    """Every string literal of the service's own code: an error code the docs name must be one of them."""
    import ast

    root = DOCS.parent
    found: set[str] = set()
    for package in ("actors", "web", "cards", "webhooks", "common", "chain_watchers"):
        for path in (root / package).rglob("*.py"):
            found |= {n.value for n in ast.walk(ast.parse(path.read_text()))
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found


def test_every_error_code_the_refunds_document_names_is_one_the_service_answers():
    named = set(re.findall(r"\b(?:4\d\d) `([a-z_]+)`", (DOCS / "refunds.md").read_text()))
    assert {"refund_state_conflict", "refund_not_refused"} <= named
    assert named - _source_strings() == set()


def test_the_refund_request_token_is_as_documented():
    from web.api.commands import Ids

    stated = re.search(r"`rfqt_` \+ (\d+) lowercase hex characters", (DOCS / "refunds.md").read_text())
    assert stated, "docs/refunds.md no longer says what a token looks like"
    # Both ways the mint route makes one (web/api/handlers/refund_requests.py): at random, and from an Idempotency-Key.
    for ids in (Ids(None, 1_764_000_000_000, b"k"), Ids("idem-key", 1_764_000_000_000, b"k", keyed=True)):
        assert re.fullmatch(rf"rfqt_[0-9a-f]{{{stated.group(1)}}}", ids.make("rfqt", "token", 24))


def _literal_fields(cls) -> dict[str, set]:
    """The fields of a contract struct whose type is a set of literal values, with those values."""
    import typing

    found = {}
    for name, hint in typing.get_type_hints(cls).items():
        for arm in typing.get_args(hint) or (hint,):
            if typing.get_origin(arm) is typing.Literal:
                found[name] = set(typing.get_args(arm))
            elif typing.get_origin(hint) is typing.Literal:
                found[name] = set(typing.get_args(hint))
    return found


def test_the_glossary_of_status_fields_names_exactly_the_values_the_contract_sends():
    import inspect

    import msgspec

    from contract import api, events

    contract: dict[str, set] = {}
    for _, struct in inspect.getmembers(events, inspect.isclass):
        if issubclass(struct, msgspec.Struct) and struct.__module__ == events.__name__:
            contract |= {name: values for name, values in _literal_fields(struct).items() if name.endswith("status")}
    contract["Delivery `status`"] = _literal_fields(api.Delivery)["status"]

    glossary = _section(DOCS / "webhooks.md", "## Glossary of status fields")
    documented = {}
    for heading, body in re.findall(r"^### (.+?)\n(.*?)(?=^### |\Z)", glossary, re.S | re.M):
        field = heading.strip("`") if heading.count("`") == 2 and heading.startswith("`") else heading
        documented[field] = set(re.findall(r"^\| `([^`]+)` \|", body, re.M))
    assert documented == contract
