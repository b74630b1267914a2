"""The unique-amount scheme: the pure pick, one row a case, and the PostgreSQL store that keeps amounts unique."""

from __future__ import annotations

import asyncio
import secrets
from datetime import timedelta

import pytest

from chain_watchers import unique_amounts
from chain_watchers.unique_amounts import RESERVED_AFTER_EXPIRY, pick
from common.clock import utcnow

PICKS = [
    ("nothing-taken-quotes-the-price", 10_000_000, set(), 9_999, 10_000_000),
    ("price-taken-adds-one-micro", 10_000_000, {10_000_000}, 9_999, 10_000_001),
    ("first-gap-is-used", 10_000_000, {10_000_000, 10_000_001, 10_000_003}, 9_999, 10_000_002),
    ("other-prices-do-not-collide", 10_000_000, {9_999_999, 10_500_000}, 9_999, 10_000_000),
    ("last-offset", 5, {5, 6, 7}, 3, 8),
    ("range-exhausted", 5, {5, 6, 7, 8}, 3, None),
]


@pytest.mark.parametrize(("due", "taken", "max_offset", "amount"), [r[1:] for r in PICKS], ids=[r[0] for r in PICKS])
def test_pick(due: int, taken: set[int], max_offset: int, amount: int | None) -> None:
    assert pick(due, taken, max_offset) == amount


ADDRESS = "0x" + "Ab" * 20


async def _assign(pool, session_id: str, due: int, now=None, address: str = ADDRESS, network: str = "base"):
    now = now or utcnow()
    return (await unique_amounts.assign(
        pool, session_id=session_id, order_id="ord_" + session_id, merchant_id="mer_x", livemode=True, due=due,
        expires_at=now + timedelta(minutes=30), now=now, targets={network: address})).get(network)


def _address() -> str:
    return "0x" + secrets.token_hex(20)


async def test_two_sessions_owing_the_same_get_different_amounts_and_each_keeps_its_own(pool) -> None:
    address = _address()
    first, second = await _assign(pool, "ses_a" + address, 10_000_000, address=address), await _assign(
        pool, "ses_b" + address, 10_000_000, address=address)
    assert (first, second) == (10_000_000, 10_000_001)
    assert await _assign(pool, "ses_a" + address, 10_000_000, address=address) == 10_000_000  # page reloaded


async def test_a_new_residual_picks_again(pool) -> None:
    address = _address()
    await _assign(pool, "ses_c" + address, 4_000_000, address=address)
    assert await _assign(pool, "ses_d" + address, 4_000_000, address=address) == 4_000_001
    assert await _assign(pool, "ses_d" + address, 1_500_000, address=address) == 1_500_000


async def test_other_networks_and_addresses_do_not_collide(pool) -> None:
    address, other = _address(), _address()
    await _assign(pool, "ses_e" + address, 7_000_000, address=address)
    assert await _assign(pool, "ses_f" + address, 7_000_000, address=other) == 7_000_000
    assert await _assign(pool, "ses_g" + address, 7_000_000, address=address, network="polygon") == 7_000_000


async def test_an_amount_is_free_again_once_its_reservation_ends(pool) -> None:
    address = _address()
    now = utcnow()
    await _assign(pool, "ses_h" + address, 3_000_000, now=now, address=address)
    later = now + timedelta(minutes=30) + RESERVED_AFTER_EXPIRY
    soon = now + timedelta(minutes=31)  # the session expired, its amount is still reserved
    assert await _assign(pool, "ses_i" + address, 3_000_000, now=soon, address=address) == 3_000_001
    assert await _assign(pool, "ses_j" + address, 3_000_000, now=later, address=address) == 3_000_000
    live = await unique_amounts.reserved(pool, "base", later)
    assert "ses_h" + address not in {r.session_id for r in live}


async def test_concurrent_pages_never_quote_the_same_amount(pool) -> None:
    address = _address()
    amounts = await asyncio.gather(*(_assign(pool, f"ses_{n}_{address}", 2_000_000, address=address) for n in range(8)))
    assert sorted(amounts) == list(range(2_000_000, 2_000_008))
