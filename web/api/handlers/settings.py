"""Merchant settings: auto-approval of customer refunds, receive addresses per network and the card account."""

from __future__ import annotations

import msgspec
from aiohttp import web
from msgspec.structs import replace

from accounts import merchants
from accounts.merchants import ApiKey
from cards import accounts
from contract import api as contract
from web.api import audit_trail, bodies, chain_inputs
from web.api.answers import respond
from web.api.commands import body
from web.api.handlers.merchants import own_merchant_id
from web.api.modes import require_live_key
from web.api.route import Route
from web.edge import idempotency
from web.edge.app_state import caller, ctx
from web.edge.errors import ApiError


def _json(merchant_id: str, s: merchants.Settings, card: str | None) -> contract.MerchantSettings:
    return contract.MerchantSettings(
        merchant_id=merchant_id, auto_approve_customer_refunds=s.auto_approve_customer_refunds,
        receive_addresses=dict(sorted(s.receive_addresses.items())),
        card=contract.CardSettings(provider="stripe", publishable_key=card) if card else None)


async def get_settings(request: web.Request) -> web.Response:
    merchant_id, pool = own_merchant_id(request), ctx(request).pool
    card = await accounts.publishable_key(pool, merchant_id, caller(request).livemode)
    return respond(_json(merchant_id, await merchants.settings(pool, merchant_id), card))


@audit_trail.records("settings.changed", "card_account.changed")
async def update_settings(request: web.Request) -> web.Response:
    own_merchant_id(request)  # another merchant's settings are refused before the body is read
    change = await body(request, bodies.SettingsIn)
    refuse_live_changes(request, change)

    async def work(conn) -> web.Response:
        return respond(await apply_change(request, conn, change))

    return await idempotency.once(request, work)


def refuse_live_changes(request: web.Request, change: bodies.SettingsIn) -> None:
    """Auto-approval and the addresses of live networks are both modes' settings: a test key changes neither
    (web/api/modes.py), and is refused before anything is written or an Idempotency-Key is taken."""
    if change.auto_approve_customer_refunds is not None:
        require_live_key(request, "auto_approve_customer_refunds")
    for slug in change.receive_addresses or {}:
        param = f"receive_addresses.{slug}"
        if not chain_inputs.network(slug, param).testnet:
            require_live_key(request, param)


def _changed(old: merchants.Settings, new: merchants.Settings) -> dict:
    """Each setting that changed with its new value (an address removed is null); none of them is a secret."""
    changed = {f"receive_addresses.{slug}": new.receive_addresses.get(slug)
               for slug in sorted(set(old.receive_addresses) | set(new.receive_addresses))
               if old.receive_addresses.get(slug) != new.receive_addresses.get(slug)}
    if old.auto_approve_customer_refunds != new.auto_approve_customer_refunds:
        changed["auto_approve_customer_refunds"] = new.auto_approve_customer_refunds
    return changed


def _card_account(api_key: ApiKey, card: bodies.CardIn) -> accounts.CardAccount:
    try:
        accounts.check_keys(api_key.livemode, card.secret_key, card.publishable_key, card.webhook_secret)
    except accounts.KeyRefused as exc:
        param = f"card.{exc.field}"
        raise ApiError(422, exc.code, f"`{param}` {exc.why}.", param) from None
    return accounts.CardAccount(merchant_id=api_key.merchant_id, livemode=api_key.livemode, provider=card.provider,
                                publishable_key=card.publishable_key, secret_key=card.secret_key,
                                webhook_secret=card.webhook_secret)


async def apply_change(request: web.Request, db, change: bodies.SettingsIn) -> contract.MerchantSettings:
    """Validate and save a settings change (db: a pool or a connection) and record it in the audit log; the
    dashboard's settings form calls this too. Every field is checked before anything is written. The card account
    is the caller's mode's."""
    api_key, vault = caller(request), ctx(request).vault
    merchant_id = api_key.merchant_id
    current = await merchants.settings(db, merchant_id)
    addresses = dict(current.receive_addresses)
    for slug, address in (change.receive_addresses or {}).items():
        param = f"receive_addresses.{slug}"
        net = chain_inputs.network(slug, param)
        if address is None:
            addresses.pop(net.slug, None)
        else:
            addresses[net.slug] = chain_inputs.address(net, address, param)
    card = None if change.card in (None, msgspec.UNSET) else _card_account(api_key, change.card)
    new = replace(current, receive_addresses=addresses)
    if change.auto_approve_customer_refunds is not None:
        new = replace(new, auto_approve_customer_refunds=change.auto_approve_customer_refunds)
    await merchants.save_settings(db, merchant_id, new)
    changed = _changed(current, new)
    if changed:
        await audit_trail.record(request, "settings.changed", db=db, details={"changed": changed})
    if card is not None:
        await accounts.connect(db, vault, card)
    elif change.card is None:
        await accounts.disconnect(db, merchant_id, api_key.livemode)
    if change.card is not msgspec.UNSET:  # the provider and public key only: the secrets never reach the log
        await audit_trail.record(request, "card_account.changed", db=db, details={
            "connected": card is not None, "provider": card.provider if card else None,
            "publishable_key": card.publishable_key if card else None})
    return _json(merchant_id, new, await accounts.publishable_key(db, merchant_id, api_key.livemode))


ROUTES = [
    Route("GET", "/merchants/{merchant_id}/settings", get_settings, "Read the merchant's settings", response=contract.MerchantSettings),
    Route("PATCH", "/merchants/{merchant_id}/settings", update_settings,
          "Change auto-approval of customer refunds, receive addresses and the card account of the caller's mode",
          bodies.SettingsIn, response=contract.MerchantSettings),
]
