"""The checkout page's pure parts, without a browser: locale choice, message tables, status model, quotes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from urllib.parse import parse_qs, urlsplit

import pytest

from actors.state import Order, OrderStatus, Session, SessionStatus
from chain_watchers.registry import parse_registry
from tests.e2e.support import receive_addresses
from web import i18n
from web.pages.quotes import quotes, reference
from web.pages.session import Attempt
from web.pages.status import state, status_json
from web.reads.networks import registry

NOW = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)


@pytest.mark.parametrize("param, header, chosen", [
    ("ja", None, "ja"), ("pt-br", None, "pt-BR"), ("ZH-tw", "ko", "zh-TW"),
    (None, "zh-Hant-TW,zh;q=0.9", "zh-TW"), (None, "zh-HK", "zh-TW"), (None, "zh", "zh-CN"),
    (None, "fr-FR, pt-PT;q=0.8, en;q=0.5", "pt-BR"), (None, "de, ru;q=0.1, tr;q=0.2", "tr"),
    ("fr", "vi-VN", "vi"), ("xx", None, "en"), (None, "*, es;q=0", "en"), (None, "ko;q=bad, es", "es"),
])
def test_locale_choice(param, header, chosen):
    assert i18n.choose(param, header) == chosen


def test_every_locale_has_a_real_table_and_a_bad_table_fails_at_load(tmp_path):
    assert set(i18n.TABLES) == set(i18n.LOCALES)
    english = i18n.TABLES["en"]
    for locale in i18n.LOCALES[1:]:
        # A translation equal to English for most keys would be a copied table, not a translation.
        same = [k for k, text in i18n.TABLES[locale].items() if text == english[k]]
        assert len(same) <= 3, (locale, same)
    for locale in i18n.LOCALES:
        (tmp_path / f"{locale}.toml").write_text('amount_due = "{amount}"\n' if locale == "ru" else 'amount_due = "{x}"\n')
    with pytest.raises(i18n.CatalogError, match="ru.toml: amount_due"):
        i18n.load(tmp_path)


def make(status=OrderStatus.PENDING, session_status=SessionStatus.OPEN, paid=0, reason=None, expires_in=600):
    session = Session("cs_1", "cs_test_key", 10_000_000, NOW + timedelta(seconds=expires_in), NOW,
                      status=session_status)
    order = Order(order_id="ord_1", merchant_id="mer_1", livemode=False, order_number=1001, amount_owed=10_000_000,
                  created_at=NOW, updated_at=NOW, status=status, amount_paid=paid,
                  metadata={"canceled_reason": reason} if reason else {}, sessions=(session,))
    return order, session


REPORTED = (Attempt("sepolia", "0x" + "ab" * 32, "reported", None),)


@pytest.mark.parametrize("kwargs, attempts, expected", [
    ({}, (), "waiting"),
    ({}, REPORTED, "confirming"),
    ({}, (Attempt("sepolia", "0x" + "ab" * 32, "rejected", None),), "waiting"),
    ({"status": OrderStatus.PARTIAL_PAID, "paid": 4_000_000}, (), "partially_paid"),
    ({"status": OrderStatus.PAID, "session_status": SessionStatus.COMPLETED, "paid": 10_000_000}, REPORTED, "paid"),
    ({"status": OrderStatus.REFUNDED, "session_status": SessionStatus.COMPLETED}, (), "paid"),
    ({"expires_in": -1}, (), "expired"),
    ({"status": OrderStatus.CANCELED, "session_status": SessionStatus.EXPIRED, "reason": "payment_timeout"}, (),
     "expired"),
    ({"status": OrderStatus.CANCELED, "session_status": SessionStatus.EXPIRED, "reason": "merchant_canceled"}, (),
     "canceled"),
    ({"status": OrderStatus.PARTIAL_PAID, "session_status": SessionStatus.EXPIRED, "paid": 1}, (), "expired"),
    ({"session_status": SessionStatus.SUPERSEDED}, (), "superseded"),
])
def test_status_model(kwargs, attempts, expected):
    order, session = make(**kwargs)
    assert state(order, session, attempts, NOW) == expected


def test_confirming_names_the_depth_the_network_requires():
    order, session = make()
    answer = status_json(order, session, REPORTED, NOW, lambda slug: {"sepolia": 64}[slug])
    assert answer["confirmations"] == {"network": "sepolia", "n": None, "m": 64}
    assert answer["amount_due"] == "10.00" and answer["expires_at"] == "2026-01-01T12:10:00Z"


def test_quotes_offer_testnets_to_test_sessions_and_mainnets_to_live_ones():
    addresses = {**receive_addresses(), "ethereum": receive_addresses()["sepolia"]}
    test = quotes(registry(), False, addresses, 12_345_000, "cs_1")
    live = quotes(registry(), True, addresses, 12_345_000, "cs_1")
    assert {q.network for q in test} == set(receive_addresses())
    assert [(q.network, q.symbol) for q in live] == [("ethereum", "USDT"), ("ethereum", "USDC")]
    assert {q.amount for q in test} == {"12.345"}


def test_each_family_gets_its_link_amount_in_base_units_and_reference():
    by_net = {q.network: q for q in quotes(registry(), False, receive_addresses(), 2_500_000, "cs_abc")}
    evm = by_net["sepolia"]
    assert evm.link == f"ethereum:{evm.token_address}@11155111/transfer?address={evm.address}&uint256=2500000"
    assert evm.transfer_data.startswith("0xa9059cbb") and evm.transfer_data.endswith(f"{2_500_000:064x}")
    solana = by_net["solana-devnet"]
    query = parse_qs(urlsplit(solana.link).query)
    assert query["amount"] == ["2.5"] and query["reference"] == [reference(registry().network("solana-devnet"), "cs_abc")]
    ton = by_net["ton-testnet"]
    assert ton.link.startswith(f"ton://transfer/{ton.address}?") and "text=cs_abc" in ton.link
    assert ton.address.startswith("0Q")  # user-friendly, non-bounceable, testnet
    assert by_net["tron-nile"].link is None and by_net["tron-nile"].transfer_data is None


def test_an_invalid_receive_address_leaves_its_network_out():
    bad = {**receive_addresses(), "sepolia": "0x" + "12" * 19}
    assert "sepolia" not in {q.network for q in quotes(registry(), False, bad, 1_000_000, "cs_1")}


COARSE = f"""
[networks.coarse]
family = "evm"
chain_id = 5
rpc_url = "http://127.0.0.1:1"
confirmations = 1
testnet = true
stablecoins = [{{ symbol = "TWO", address = "0x{'34' * 20}", decimals = 2 }}]
"""


@pytest.mark.parametrize("micros, offered", [(1_234_500, 0), (1_230_000, 1)])
def test_a_token_too_coarse_for_the_amount_is_left_out(micros, offered):
    coarse = parse_registry(COARSE, {})
    assert len(quotes(coarse, False, {"coarse": receive_addresses()["sepolia"]}, micros, "cs_1")) == offered
