"""Key hygiene (docs/operations.md, Rotating the master key): the master key only encrypts, and rotates in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import msgspec
import pytest
from cryptography.fernet import Fernet, InvalidToken

from accounts.merchants import ApiKey
from common import db
from common.secrets import Vault
from tests.conftest import RUN, database, running
from web.edge.key_cache import MAX_ENTRIES, KeyCache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICK = "/b2b/v1/checkout-sessions/quick"


def _rotate(database_url: str, master_key: str) -> dict:
    env = dict(os.environ, DATABASE_URL=database_url, SERVICE_MASTER_KEY=master_key, PYTHONPATH=ROOT)
    run = subprocess.run([sys.executable, "-m", "service", "keys", "rotate-master", "--json"], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


@pytest.fixture
async def own_database():
    """Rotation re-seals every secret of a database: not the one the rest of the suite's app reads."""
    async with database(f"svc_test_{RUN}_rotation") as url:
        # The web and a worker share it: each of the worker's lanes holds a connection while it serves.
        pool = await db.connect(url, min_size=1, max_size=10)
        yield url, pool
        await pool.close()


async def test_rotation_keeps_keys_and_derived_ids_and_retires_the_old_key(settings, redis, keys, own_database):
    url, pool = own_database
    old, new = settings.master_key, Fernet.generate_key().decode()
    prefix = f"{settings.redis_prefix}rot:"
    before = msgspec.structs.replace(settings, database_url=url, redis_prefix=prefix)
    keyed = {"Idempotency-Key": "rotation-order-1"}
    body = {"amount": "11.00", "external_ref": "kept across rotation"}
    async with running(before, pool, redis, keys.__class__(prefix, settings.partitions)) as stack:
        client = await stack.merchant("Rotating")
        status, first = await client.post(QUICK, body, headers=keyed)
        assert status == 201, first
        csrf_before = await _refund_form_csrf(stack, client, first["order_id"])

    counts = _rotate(url, f"{new},{old}")["resealed"]
    assert counts["api_keys.secret_enc"] == 1 and counts["service_secrets.secret_enc"] == 1

    after = msgspec.structs.replace(before, master_key=new)  # the old key is gone from the configuration
    async with running(after, pool, redis, keys.__class__(prefix, settings.partitions)) as stack:
        client.http, client.base_url = stack.http, stack.base_url
        status, listed = await client.get("/b2b/v1/orders")  # the merchant's secret key still verifies
        assert status == 200 and [o["order_id"] for o in listed["data"]] == [first["order_id"]]
        status, again = await client.post(QUICK, body, headers=keyed)  # the same key names the same order
        assert (status, again["order_id"], again["session_key"]) == (201, first["order_id"], first["session_key"])
        assert await _refund_form_csrf(stack, client, first["order_id"]) == csrf_before
        newer = await stack.merchant("Sealed after")

    sealed = await pool.fetch("SELECT public_key, secret_enc FROM api_keys")
    assert len(sealed) == 2
    for row in sealed:
        with pytest.raises(InvalidToken):
            Fernet(old.encode()).decrypt(row["secret_enc"].encode())
        assert Vault(new.encode()).open(row["secret_enc"]).startswith("sk_test_")
    assert newer.public_key in {r["public_key"] for r in sealed}


async def _refund_form_csrf(stack, client, order_id: str) -> str:
    """The CSRF token the hosted refund form embeds for a token of this order (derived, so stable by design)."""
    status, paid = await client.post(f"/b2b/v1/test-helpers/orders/{order_id}/payments",
                                     {"amount": "11.00", "network": "sepolia",
                                      "token_address": "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"},
                                     headers={"Idempotency-Key": f"pay-{order_id}"})
    assert status in (200, 201), paid
    status, minted = await client.post(f"/b2b/v1/merchants/{client.merchant_id}/refund-requests",
                                       {"ref_type": "order_id", "ref_value": order_id, "amount": "1.00"},
                                       headers={"Idempotency-Key": f"mint-{order_id}"})
    assert status == 201, minted
    async with stack.http.get(f"{stack.base_url}/refund-request/{minted['token']}") as resp:
        page = await resp.text()
    start = page.index('name="csrf" value="') + len('name="csrf" value="')
    return page[start:page.index('"', start)]


def _key(n: int) -> ApiKey:
    return ApiKey(f"pk_test_{n}", "mer_x", False, "sk_test_x")


def test_the_key_cache_is_bounded():
    cache = KeyCache(max_entries=3)
    for n in range(5):
        cache.put(f"pk_test_{n}", _key(n))
    assert len(cache) == 3
    assert cache.get("pk_test_0") == (False, None) and cache.get("pk_test_4") == (True, _key(4))


def test_a_miss_is_forgotten_within_seconds(monkeypatch):
    import web.edge.key_cache as key_cache

    now = [1000.0]
    monkeypatch.setattr(key_cache.time, "monotonic", lambda: now[0])
    cache = KeyCache()
    cache.put("pk_test_made_up", None)
    assert cache.get("pk_test_made_up") == (True, None)
    now[0] += key_cache.MISS_S + 0.01
    assert cache.get("pk_test_made_up") == (False, None)
    cache.put("pk_test_real", _key(1))
    now[0] += key_cache.HIT_S - 0.01
    assert cache.get("pk_test_real") == (True, _key(1))


async def test_made_up_keys_do_not_grow_the_cache_past_its_bound(stack, merchant):
    from web.edge.app_state import CONTEXT

    cache = stack.server.app[CONTEXT].key_cache
    cache.max_entries = 50
    try:
        for n in range(80):
            headers = merchant.headers("GET", "/b2b/v1/orders", b"") | {"X-Client-ID": f"pk_test_madeup{n}"}
            async with stack.http.get(stack.base_url + "/b2b/v1/orders", headers=headers) as resp:
                assert resp.status == 401
        assert len(cache) <= 50
    finally:
        cache.max_entries = MAX_ENTRIES
