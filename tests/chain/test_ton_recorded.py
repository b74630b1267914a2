"""The TON adapter on jetton notifications recorded from TON mainnet and testnet (tests/chain/recorded/ton/README.md).

Transactions recorded whole (toncenter v2 `data`) are served through the lite-client double as their account's
history, byte for byte; their hashes are checked against the recording's `transaction_id`. Recordings that carry
only a message body (toncenter v3, tonapi, a decoder's test vectors) go to the decoding function the adapter uses.
"""

from __future__ import annotations

import base64

import pytest
from pytoniq_core import Address, Cell

from chain_watchers.base import TokenTransfer
from chain_watchers.registry import load_registry
from chain_watchers.ton import TonAdapter, _parse_notification

from .fake_lite_client import FakeLiteClient, Ledger
from .ton_recorded import load_recorded, recorded

NOTIFICATION_TO_UNINIT = "failed: compute phase skipped (no_gas)"  # the owner's wallet was not deployed yet


def raw(address: str) -> str:
    return Address(address).to_str(is_user_friendly=False)


def b64_hex(value: str) -> str:
    return base64.b64decode(value).hex()


def adapter_over(slug: str, transactions: list[dict], derives: str | None) -> TonAdapter:
    ledger, network = Ledger(), load_registry().network(slug)
    load_recorded(ledger, transactions, raw(network.stablecoins[0].address), derives)
    return TonAdapter(network, FakeLiteClient(ledger))


MAINNET = recorded("mainnet_toncenter_v2_get_transactions_jetton_deposits.json")["result"]
OWNER = raw(MAINNET[0]["address"]["account_address"])
USDT_WALLET = "EQBvYvJ6iIYnpFq5nkkNS4NZkyj70ZKqw3RuFlQsni7icgjJ"  # the owner's jetton wallet that notified twice
USDT_RAW = raw("EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs")
BUYER = "0:1f5806c73d03bbc96eb7eebf16067f1f2e8e270cfa16d57001aa9eaf7456f008"


def deposit(amount: int) -> TokenTransfer:
    return TokenTransfer(token_address=USDT_RAW, from_address=BUYER, to_address=OWNER, amount_base_units=amount,
                         ordinal=0)


def by_lt(lt: str) -> dict:
    return next(tx for tx in MAINNET if tx["transaction_id"]["lt"] == lt)


@pytest.mark.parametrize(
    ("lt", "transfers", "reason"),
    [
        # Both notifications reached a wallet not yet deployed: the jetton wallet credited the tokens before notifying.
        ("46760684000003", (deposit(17_000_000),), NOTIFICATION_TO_UNINIT),
        ("46760681000003", (deposit(10_000_000),), NOTIFICATION_TO_UNINIT),
        # Another jetton's wallet notified the same owner: the configured master does not derive it, so nothing paid.
        ("46760651000003", (), NOTIFICATION_TO_UNINIT),
        # The owner's wallet deploying itself and sending a jetton transfer out, then the excess coming back.
        ("46819696000001", (), None),
        ("46855471000001", (), None),
    ],
)
async def test_each_recorded_mainnet_transaction_is_decoded_from_the_account_history(lt, transfers, reason) -> None:
    tx = by_lt(lt)
    adapter = adapter_over("ton", MAINNET, derives=USDT_WALLET)
    seen = await adapter.fetch(tx["transaction_id"]["hash"], account=OWNER)  # toncenter's base64 spelling
    assert (seen.found, seen.final, seen.tx_hash, seen.transfers, seen.reason) == (
        True, True, b64_hex(tx["transaction_id"]["hash"]), transfers, reason)
    assert seen.success is (reason is None)


async def test_a_scan_of_the_recorded_history_finds_only_the_configured_jettons_deposits() -> None:
    adapter = adapter_over("ton", MAINNET, derives=USDT_WALLET)
    seen, newest = await adapter.transfers_since(OWNER, 0)
    assert [(s.tx_hash, s.position, s.transfer) for s in seen] == [
        (b64_hex(by_lt("46760684000003")["transaction_id"]["hash"]), 46760684000003, deposit(17_000_000)),
        (b64_hex(by_lt("46760681000003")["transaction_id"]["hash"]), 46760681000003, deposit(10_000_000)),
    ]
    assert newest == 46855471000001  # the recording's newest transaction: where the next scan resumes
    again, _ = await adapter.transfers_since(OWNER, newest)
    assert again == []


async def test_a_testnet_notification_with_a_text_comment_is_decoded_with_its_comment() -> None:
    tx = recorded("testnet_toncenter_v2_transaction_notification_with_comment.json")
    adapter = adapter_over("ton-testnet", [tx], derives=tx["in_msg"]["source"])
    owner = raw(tx["address"]["account_address"])
    seen = await adapter.fetch(b64_hex(tx["transaction_id"]["hash"]), account=owner)
    assert seen.transfers == (TokenTransfer(
        token_address=raw("kQD0GKBM8ZbryVk2aESmzfU6b9b_8era_IkvBSELujFZPsyy"),
        from_address="0:9bd705c0ef158165067a082fcbb34a406e975f47fffec8c62a490ba74cf0b4d8", to_address=owner,
        amount_base_units=10_000_000_000, ordinal=0,
        memo="7ade4478ebe27e4272de295952b307f1b1affe6a070fa8accf594c14d75f1df4"),)
    assert (seen.success, seen.reason) == (False, NOTIFICATION_TO_UNINIT)


def body_of(boc: bytes, expected_hash: str | None = None) -> Cell:
    cell = Cell.one_from_boc(boc)
    if expected_hash is not None:
        assert cell.hash.hex() == expected_hash
    return cell


def test_a_toncenter_v3_notification_body_decodes_to_its_amount_sender_and_comment() -> None:
    # v3 gives the message body, not the transaction's cells, so the lite-client path cannot serve it.
    first = recorded("testnet_toncenter_v3_transactions_notification_to_uninit.json")["transactions"][0]
    content = first["in_msg"]["message_content"]
    body = body_of(base64.b64decode(content["body"]), b64_hex(content["hash"]))
    assert first["in_msg"]["opcode"] == "0x7362d09c" and first["description"]["compute_ph"]["skip_reason"] == "no_gas"
    assert _parse_notification(body.begin_parse()) == (
        111_000_000_000, "0:e1cb4616edbdd7f663f295cf611fc82917839cd2a3775cbc2194df43baf6601a", "1985597651")


@pytest.mark.parametrize("name", sorted(recorded("testnet_notification_bodies_with_comments.json")))
def test_notification_bodies_decode_as_another_decoder_published_them(name: str) -> None:
    vector = recorded("testnet_notification_bodies_with_comments.json")[name]
    expected = vector["decoded"]
    parsed = _parse_notification(body_of(base64.b64decode(vector["body"])).begin_parse())
    assert parsed == (expected["amount"], raw(expected["sender"]), expected["comment"])


def test_a_tonapi_notification_with_a_swap_payload_pays_its_amount_and_names_no_session() -> None:
    message = recorded("testnet_tonapi_trace_notification_swap_payload.json")["in_msg"]
    decoded = message["decoded_body"]
    parsed = _parse_notification(body_of(bytes.fromhex(message["raw_body"])).begin_parse())
    assert parsed == (int(decoded["amount"]), decoded["sender"], None)  # a forward payload that is no text comment


def test_bodies_that_are_not_notifications_are_not_decoded_as_one() -> None:
    # The recorded jetton transfer the owner sent (0x0f8a7ea5) and the excess it got back (0xd53276db).
    sent = by_lt("46855462000001")["out_msgs"][0]["msg_data"]["body"]
    excess = by_lt("46855471000001")["in_msg"]["msg_data"]["body"]
    for body in (sent, excess):
        assert _parse_notification(body_of(base64.b64decode(body)).begin_parse()) is None
