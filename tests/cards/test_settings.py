"""The merchant's card account in its settings: connected per mode, secrets sealed and never answered back."""

from __future__ import annotations

import pytest

CARD = {"provider": "stripe", "secret_key": "sk_test_51abcdefgh", "publishable_key": "pk_test_51abcdefgh",
        "webhook_secret": "whsec_abcdefgh"}
ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"  # on sepolia: a test key sets test networks' addresses


def settings_path(client) -> str:
    return f"/b2b/v1/merchants/{client.merchant_id}/settings"


async def test_a_connected_account_answers_its_publishable_key_and_never_its_secrets(card_stack):
    client = await card_stack.merchant()
    status, body = await client.patch(settings_path(client), {"card": CARD})
    assert status == 200, body
    assert body["card"] == {"provider": "stripe", "publishable_key": CARD["publishable_key"], "connected": True}
    status, read = await client.get(settings_path(client))
    assert read["card"] == body["card"]
    assert CARD["secret_key"] not in str(read) and CARD["webhook_secret"] not in str(read)
    row = await card_stack.pool.fetchrow("SELECT * FROM card_accounts WHERE merchant_id = $1", client.merchant_id)
    stored = " ".join(str(v) for v in row.values())
    assert CARD["secret_key"] not in stored and CARD["webhook_secret"] not in stored  # sealed at rest
    assert card_stack.vault.open(row["secret_key_enc"]) == CARD["secret_key"]


async def test_null_disconnects_and_absent_leaves_the_account(card_stack):
    client = await card_stack.merchant()
    await client.patch(settings_path(client), {"card": CARD})
    status, body = await client.patch(settings_path(client), {"receive_addresses": {"sepolia": ADDRESS}})
    assert status == 200 and body["card"]["connected"] is True
    status, body = await client.patch(settings_path(client), {"card": None})
    assert status == 200 and body["card"] is None
    assert await card_stack.pool.fetchval("SELECT count(*) FROM card_accounts WHERE merchant_id = $1",
                                          client.merchant_id) == 0


async def test_each_mode_has_its_own_account(card_stack):
    client = await card_stack.merchant()
    live = await card_stack.other_mode(client, livemode=True)
    await client.patch(settings_path(client), {"card": CARD})
    status, body = await live.get(settings_path(live))
    assert status == 200 and body["card"] is None


@pytest.mark.parametrize(("change", "param", "code"), [
    ({"secret_key": "sk_live_51abcdefgh"}, "card.secret_key", "key_mode_mismatch"),
    ({"publishable_key": "pk_live_51abcdefgh"}, "card.publishable_key", "key_mode_mismatch"),
    ({"secret_key": "pk_test_51abcdefgh"}, "card.secret_key", "invalid_key"),
    ({"webhook_secret": "secret_abcdefgh"}, "card.webhook_secret", "invalid_key"),
    ({"provider": "paypal"}, "card.provider", "invalid_field"),
])
async def test_a_bad_card_object_is_refused_naming_the_field_and_writes_nothing(card_stack, change, param, code):
    client = await card_stack.merchant()
    status, body = await client.patch(settings_path(client), {"receive_addresses": {"sepolia": ADDRESS},
                                                              "card": {**CARD, **change}})
    assert status == 422, body
    assert body["error"]["param"] == param and body["error"]["code"] == code
    status, read = await client.get(settings_path(client))
    assert read["card"] is None and read["receive_addresses"] == {}


async def test_a_live_key_in_live_mode_is_accepted(card_stack):
    client = await card_stack.merchant(livemode=True)
    live = {**CARD, "secret_key": "sk_live_51abcdefgh", "publishable_key": "pk_live_51abcdefgh"}
    status, body = await client.patch(settings_path(client), {"card": live})
    assert status == 200 and body["card"]["publishable_key"] == live["publishable_key"]
