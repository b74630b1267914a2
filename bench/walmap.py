"""Where the WAL of a measured run went: its bytes by relation (table, index, TOAST) and by record kind, read with
pg_walinspect (PostgreSQL 15) over the run's LSN range and kept to the bench database's relations.

A record is counted against the relation of its first block reference (an index insertion against the index, a
heap insertion against the table); `fpi` is the part of it that was full-page images (the first change of a page
after a checkpoint writes the whole page). Records naming no relation (commits, running-xacts) come from every
database on the server and are summed apart, as `(no relation: all databases)`.

    python bench/walmap.py --database svc_bench_x --from 0/16B3F20 --to 0/1A000000 --requests 10000
"""

from __future__ import annotations

import argparse
import asyncio
from typing import NamedTuple

import asyncpg

# One pass over the range in the server: the first block reference's relfilenode, the record's bytes and its
# full-page images' bytes, summed by relation and record kind.
_BY_RELATION = r"""
SELECT substring(block_ref from 'blkref #0: rel \d+/(\d+)/\d+')::oid AS db,
       substring(block_ref from 'blkref #0: rel \d+/\d+/(\d+)')::oid AS node,
       resource_manager || '/' || record_type AS kind,
       count(*) AS records, sum(record_length) AS bytes, sum(fpi_length) AS fpi
FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
GROUP BY 1, 2, 3
"""
# A relfilenode's relation, a TOAST table named after its owner.
_NAMES = """
SELECT c.relfilenode AS node, coalesce(owner.relname || ' (TOAST)', toasted.relname || ' (TOAST index)', c.relname) AS name
FROM pg_class c
LEFT JOIN pg_class owner ON owner.reltoastrelid = c.oid
LEFT JOIN pg_index i ON i.indexrelid = c.oid
LEFT JOIN pg_class toasted ON toasted.reltoastrelid = i.indrelid
WHERE c.relfilenode <> 0
"""


class Share(NamedTuple):
    name: str
    records: int
    bytes: int
    fpi: int


async def wal_by_relation(conn: asyncpg.Connection, start: int | str, end: int | str) -> list[Share]:
    """The WAL between two positions by relation of this database, largest first, and the records of none."""
    await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    own = await conn.fetchval("SELECT oid FROM pg_database WHERE datname = current_database()")
    names = {r["node"]: r["name"] for r in await conn.fetch(_NAMES)}
    totals: dict[str, list[int]] = {}
    for row in await conn.fetch(_BY_RELATION, _lsn(start), _lsn(end)):
        if row["db"] is None:
            name = "(no relation: all databases)"
        elif row["db"] == own or row["db"] == 0:  # 0: shared catalogs
            name = names.get(row["node"], f"relfilenode {row['node']}")
        else:
            continue  # another database's work on the same server
        total = totals.setdefault(name, [0, 0, 0])
        for i, key in enumerate(("records", "bytes", "fpi")):
            total[i] += int(row[key])
    return sorted((Share(n, *t) for n, t in totals.items()), key=lambda s: -s.bytes)


# After a VACUUM: each table's heap, each index, and each table's TOAST (with its index) of a schema.
_AT_REST = """
SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_class c
WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'i')
UNION ALL
SELECT c.relname || ' (TOAST)', pg_total_relation_size(c.reltoastrelid) FROM pg_class c
WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' AND c.reltoastrelid <> 0
"""


async def at_rest(conn: asyncpg.Connection, schema: str) -> dict[str, int]:
    """Bytes on disk of each table, index and TOAST of the schema, largest first, empty ones left out."""
    rows = await conn.fetch(_AT_REST, schema)
    return {r["name"]: r["bytes"] for r in sorted(rows, key=lambda r: -r["bytes"]) if r["bytes"]}


def _lsn(value: int | str) -> int:
    """An LSN as asyncpg passes pg_lsn: its byte position (from "16/B374D848" as PostgreSQL prints it)."""
    if isinstance(value, int):
        return value
    high, low = value.split("/")
    return int(high, 16) << 32 | int(low, 16)


def table(shares: list[Share], requests: int) -> str:
    """Bytes, full-page-image bytes and records per request of each relation, as text."""
    lines = [f"{'relation':<48} {'B/request':>10} {'of which FPI':>12} {'records/request':>16}"]
    for s in shares:
        lines.append(f"{s.name:<48} {s.bytes / requests:>10.0f} {s.fpi / requests:>12.0f}"
                     f" {s.records / requests:>16.2f}")
    owned = [s for s in shares if not s.name.startswith("(")]
    lines.append(f"{'(this database, all relations)':<48} {sum(s.bytes for s in owned) / requests:>10.0f}"
                 f" {sum(s.fpi for s in owned) / requests:>12.0f} {sum(s.records for s in owned) / requests:>16.2f}")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True)
    parser.add_argument("--from", dest="start", required=True, help="LSN, as pg_current_wal_lsn() gives it")
    parser.add_argument("--to", dest="end", required=True)
    parser.add_argument("--requests", type=int, default=1)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/")
    args = parser.parse_args()
    conn = await asyncpg.connect(args.url.rstrip("/") + "/" + args.database)
    try:
        print(table(await wal_by_relation(conn, args.start, args.end), args.requests))
    finally:
        await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
