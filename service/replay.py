"""Rebuild an order from its event log and compare it with the stored snapshot (on-call debugging)."""

from __future__ import annotations

import asyncpg
import msgspec

from actors import store
from actors.order import Order, replay

_decode_order = msgspec.json.Decoder(Order).decode


async def replay_order(database_url: str, order_id: str) -> dict:
    conn = await asyncpg.connect(database_url)
    try:
        events = await store.history(conn, order_id)
        stored = await conn.fetchval("SELECT state FROM orders WHERE order_id = $1", order_id)
    finally:
        await conn.close()
    rebuilt = replay(events)
    snapshot = _decode_order(stored) if stored else None
    return {
        "order_id": order_id,
        "events": len(events),
        "matches": rebuilt == snapshot,
        "rebuilt": msgspec.to_builtins(rebuilt),
    }
