"""`service cards` as its own process: the Procfile entry sends an approved card refund to the provider, sees it
executed, and stops on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from tests.watchers.test_process import _status_once


async def test_cards_process_executes_a_card_refund_and_stops_on_sigterm(card_merchant) -> None:
    paid = await card_merchant.paid_order("6.00")
    status, refund = await card_merchant.client.post(f"/b2b/v1/merchants/{card_merchant.merchant_id}/refunds",
                                                     {"order_id": paid["order_id"], "amount": "6.00"})
    assert status == 201, refund
    s = card_merchant.stack.settings
    env = dict(os.environ, DATABASE_URL=s.database_url, REDIS_URL=s.redis_url, REDIS_PREFIX=s.redis_prefix,
               PARTITIONS=str(s.partitions), SERVICE_MASTER_KEY=s.master_key, STRIPE_API_BASE=s.stripe_api_base)
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "service", "cards", env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        status = await _status_once(card_merchant.stack.pool, paid["order_id"], "REFUNDED", timeout=60)
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = await asyncio.wait_for(process.communicate(), 30)
    assert status == "REFUNDED", errors.decode()[-3000:]
    assert process.returncode == 0, errors.decode()[-3000:]
    assert b"cards: sending card refunds to the providers" in output
    [provider_refund] = await card_merchant.provider_refunds(paid["payments"][0]["tx_hash"])
    status, read = await card_merchant.client.get(f"/b2b/v1/refunds/{refund['refund_id']}")
    assert read["execution"]["tx_hash"] == provider_refund.id
