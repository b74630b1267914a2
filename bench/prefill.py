"""Years of orders before a benchmark: N paid orders, each with its session, its five events and its two recorded
commands, spread over 1,000 merchants, written straight into the tables.

One template order is decided by the order core and committed by the actor's own statement (a quick session, then
its payment in full), so every row has the shape the service writes. PostgreSQL then copies the template's rows N
times in chunks, giving each copy its own ids (order, session, session key, events, commands, payment), its
merchant's next order number and a creation time further back (one order every 6 s: 5,000,000 orders span about
a year), so the indexes grow as they would. The copies are never decided again: they are the data a busy
deployment carries, which is what the benchmark needs to measure beside.

    python bench/run.py --prefill 5000000                       # prefill, then measure
    python bench/prefill.py 5000000 --database svc_bench_5m     # prefill once ...
    python bench/run.py --database svc_bench_5m                 # ... and measure on it as often as needed
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actors import batch, store
from actors import messages as m
from actors.numbers import NumberBlocks
from common import db
from common.clock import utcnow
from common.ids import random_id

MERCHANTS = 1000
CHUNK = 50_000
STEP_S = 6  # seconds between two prefilled orders' creation times
USDT = "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"  # Sepolia's USDT (config/networks.toml): test mode pays on testnets


async def _apply(pool: asyncpg.Pool, command: m.Command) -> None:
    """One command decided against its order's stored state and committed, as an actor does a batch of one."""
    envelope = m.Envelope(command_id=random_id("cmd"), command=command)
    async with pool.acquire() as conn:
        numbers = NumberBlocks()
        prepared = await store.prepare(conn, batch.wanted([envelope], {}, numbers))
        decided = batch.decide_batch([envelope], prepared, prepared.orders, numbers)
        assert not decided.broken and decided.outcomes[0].appended, decided.outcomes[0]
        # Unfenced: no worker serves the bench's database while it is prefilled.
        await store.commit(conn, store.batch_rows(decided.fresh, decided.changed, decided.encoded, [], prepared.orders),
                           ())


async def template(pool: asyncpg.Pool, merchant_id: str) -> dict[str, str]:
    """A paid order of 10.00 for this merchant, decided and committed as the actors do; returns its ids."""
    now = utcnow()
    ids = {"order": random_id("ord"), "session": random_id("cs"), "key": random_id("cs_test", 24),
           "payment": random_id("pay")}
    session = m.NewSession(session_id=ids["session"], session_key=ids["key"], expires_at=now + timedelta(minutes=30))
    await _apply(pool, m.CreateOrder(order_id=ids["order"], merchant_id=merchant_id, livemode=False, at=now,
                                     amount=10_000_000, session=session))
    await _apply(pool, m.ConfirmPayment(order_id=ids["order"], merchant_id=merchant_id, livemode=False, at=now,
                                        payment_id=ids["payment"], network="sepolia",
                                        tx_hash=f"0x{secrets.token_hex(32)}", token_address=USDT, amount=10_000_000, session_id=ids["session"]))
    await pool.execute("DELETE FROM outbox")  # the template's events are never published
    return ids


# Each copy g (from $2 to $3) of the template order $1: its ids derived from g and, as the service's ids do, begun
# by its creation time in milliseconds (t, common/ids.py); its merchant g % 1000 of the
# merchants $4, its number that merchant's (g / 1000)-th after the template's. Text and JSON columns are rewritten by
# replacing the template's ids (pg_temp.rename, made per template) and its order number, as the JSON holds them.
_COPY = """
WITH ids AS (
    SELECT g, 'ord_' || t || substr(md5('o' || g), 1, 24) AS order_id,
           'cs_' || t || substr(md5('s' || g), 1, 24) AS session_id,
           'cs_test_' || t || md5('k' || g) || substr(md5('K' || g), 1, 16) AS session_key,
           'pay_' || t || substr(md5('p' || g), 1, 24) AS payment_id, merchant_id, t_number, order_number, at, t
    FROM (SELECT g, ($4::text[])[g % {merchants} + 1] AS merchant_id, o.order_number AS t_number,
                 o.order_number + g / {merchants} + 1 AS order_number, o.created_at - g * interval '{step} seconds' AS at
          FROM generate_series($2::bigint, $3::bigint) AS g, orders o WHERE o.order_id = $1) AS copies,
         LATERAL (SELECT lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') AS t) AS time_part
), orders_in AS (
    INSERT INTO orders (order_id, merchant_id, livemode, order_number, status, external_ref, state, version, created_at,
                        updated_at, state_schema)
    SELECT i.order_id, i.merchant_id, t.livemode, i.order_number, t.status, t.external_ref,
           jsonb_set(pg_temp.rename(t.state::text, i.session_key, i.session_id, i.payment_id, i.order_id,
                                    i.merchant_id)::jsonb, '{{order_number}}', to_jsonb(i.order_number)),
           t.version, i.at, i.at, t.state_schema
    FROM ids i, orders t WHERE t.order_id = $1
), sessions_in AS (
    INSERT INTO checkout_sessions (session_id, session_key, order_id, merchant_id, livemode, status, expires_at)
    SELECT i.session_id, i.session_key, i.order_id, i.merchant_id, s.livemode, s.status, i.at + interval '30 minutes'
    FROM ids i, checkout_sessions s WHERE s.order_id = $1
), commands_in AS (
    INSERT INTO commands (command_id, order_id, request_hash, reply, created_at, kind, at, version)
    SELECT 'cmd_' || i.t || substr(md5(c.command_id || i.g), 1, 24), i.order_id, c.request_hash,
           convert_to(replace(pg_temp.rename(convert_from(c.reply, 'UTF8'), i.session_key, i.session_id, i.payment_id,
                                             i.order_id, i.merchant_id),
                              '"order_number":' || i.t_number, '"order_number":' || i.order_number), 'UTF8'),
           i.at, c.kind, i.at, c.version
    FROM ids i, commands c WHERE c.order_id = $1
)
INSERT INTO events (event_id, order_id, seq, type, merchant_id, livemode, data, created_at, public, schema)
SELECT 'evt_' || i.t || substr(md5(e.event_id || i.g), 1, 24), i.order_id, e.seq, e.type, i.merchant_id, e.livemode,
       replace(pg_temp.rename(e.data::text, i.session_key, i.session_id, i.payment_id, i.order_id, i.merchant_id),
               '"order_number": ' || i.t_number, '"order_number": ' || i.order_number)::jsonb,
       i.at,
       convert_to(replace(replace(pg_temp.rename(convert_from(e.public, 'UTF8'), i.session_key, i.session_id,
                                                 i.payment_id, i.order_id, i.merchant_id),
                                  e.event_id, 'evt_' || i.t || substr(md5(e.event_id || i.g), 1, 24)),
                          '"order_number":"' || i.t_number || '"', '"order_number":"' || i.order_number || '"'), 'UTF8'),
       e.schema
FROM ids i, events e WHERE e.order_id = $1
"""

# The template's ids replaced by a copy's, in any text: session key first, as it is the longest.
_RENAME = """
CREATE FUNCTION pg_temp.rename(body text, session_key text, session_id text, payment_id text, order_id text,
                               merchant_id text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT replace(replace(replace(replace(replace(body, '{key}', session_key), '{session}', session_id),
                                   '{payment}', payment_id), '{order}', order_id), '{merchant}', merchant_id)
$$
"""


async def load(pool: asyncpg.Pool, database_url: str, count: int, say: Callable[[str], None]) -> dict:
    """Prefill `count` orders; returns the time it took and the database's size."""
    started = time.monotonic()
    merchant_ids = [random_id("mer") for _ in range(MERCHANTS)]
    await pool.execute("INSERT INTO merchants (merchant_id, name) SELECT id, 'Prefilled ' || id FROM unnest($1::text[]) id",
                       merchant_ids)
    ids = await template(pool, merchant_ids[0])
    copy = _COPY.format(merchants=MERCHANTS, step=STEP_S)
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(_RENAME.format(merchant=merchant_ids[0], **ids))
        for first in range(1, count + 1, CHUNK):
            last = min(first + CHUNK - 1, count)
            await conn.execute(copy, ids["order"], first, last, merchant_ids)
            if last % (10 * CHUNK) == 0 or last == count:
                say(f"prefill: {last:,} of {count:,} orders after {time.monotonic() - started:.0f} s")
        await conn.execute("""INSERT INTO order_numbers (merchant_id, livemode, last)
                              SELECT merchant_id, false, max(order_number) FROM orders GROUP BY merchant_id
                              ON CONFLICT (merchant_id, livemode) DO UPDATE SET last = excluded.last""")
        await conn.execute("VACUUM (ANALYZE)")  # as autovacuum has long since done on a deployment's old orders
        size = await conn.fetchval("SELECT pg_database_size(current_database())")
    finally:
        await conn.close()
    took = time.monotonic() - started
    say(f"prefill: {count:,} orders over {MERCHANTS:,} merchants in {took:.0f} s; database {size / 2**30:.1f} GiB")
    return {"orders": count, "merchants": MERCHANTS, "seconds": round(took, 1), "database_gib": round(size / 2**30, 2)}


async def main() -> None:
    """Prefill a database of its own once, for several runs of `bench/run.py --database NAME` to measure on."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("orders", type=int)
    parser.add_argument("--database", required=True, help="the database to create, migrate and fill")
    parser.add_argument("--admin-url", default=os.environ.get("BENCH_DATABASE_ADMIN_URL",
                                                              "postgresql://postgres@127.0.0.1:5432/postgres"))
    args = parser.parse_args()
    admin = await asyncpg.connect(args.admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{args.database}"')
    finally:
        await admin.close()
    url = args.admin_url.rsplit("/", 1)[0] + "/" + args.database
    await db.migrate(url)
    pool = await db.connect(url, min_size=1, max_size=2)
    try:
        await load(pool, url, args.orders, lambda line: print(line, flush=True))
    finally:
        await pool.close()


if __name__ == "__main__":
    asyncio.run(main())
