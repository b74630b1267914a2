"""Rebuild an order from its event log and compare it with the stored snapshot (on-call debugging)."""

from __future__ import annotations

import asyncpg
import msgspec

from actors import store
from actors.order import replay


async def replay_order(database_url: str, order_id: str) -> dict:
    conn = await asyncpg.connect(database_url)
    try:
        events = await store.history(conn, order_id)
        snapshot = await store.snapshot(conn, order_id)
    finally:
        await conn.close()
    rebuilt = replay(events)
    return {
        "order_id": order_id,
        "events": len(events),
        "matches": rebuilt == snapshot,
        "rebuilt": msgspec.to_builtins(rebuilt),
    }
