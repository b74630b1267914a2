"""A command read from a stream is input like any other: altered copies of a real command, appended to
its partition by hand, never become orders; each is in the dead-letter stream with its reason, and
the partitions keep flowing."""

from __future__ import annotations

import asyncio
import json
import secrets
from datetime import datetime, timedelta

import pytest

from streams.names import ACTORS_GROUP


def _keep(_command: dict) -> None:
    pass


# (case, the copy's order id, how the command is altered, words the dead letter's reason holds). The order id
# is fresh and on the original's partition ("ord_<hex>"), or malformed ("order-<n>") on that partition too, or
# a fresh one that belongs on another partition.
ALTERATIONS = [
    ("negative amount", "fresh", lambda c: c.update(amount=-5_000_000), "invariant_violated: `amount`"),
    ("zero amount", "fresh", lambda c: c.update(amount=0), "invariant_violated: `amount`"),
    ("huge amount", "fresh", lambda c: c.update(amount=10**18), "invariant_violated: `amount`"),
    ("amount past int64", "fresh", lambda c: c.update(amount=10**30), "invariant_violated: `amount`"),
    ("naive timestamps", "fresh", lambda c: _times(c, lambda t: t.rstrip("Z").split("+")[0]), "invariant_violated"),
    ("year 9999", "fresh", lambda c: _times(c, lambda t: "9999-12-31T23:59:59Z"), "invariant_violated"),
    ("year 1", "fresh", lambda c: _times(c, lambda t: "0001-01-01T00:00:00Z"), "invariant_violated"),
    ("a week old", "fresh", lambda c: c.update(at=_week_ago(c["at"])), "command_skew"),
    ("unknown kind", "fresh", lambda c: c.update(kind="mint_money"), "undecodable: Invalid value 'mint_money'"),
    ("malformed order id", "malformed", _keep, "invariant_violated: `order_id`"),
    ("another partition's order", "elsewhere", _keep, "wrong_partition"),
    ("malformed session id", "fresh", lambda c: c["session"].update(session_id="sess_x!"), "invariant_violated"),
]


def _times(command: dict, change) -> None:
    command["at"] = change(command["at"])
    command["session"]["expires_at"] = change(command["session"]["expires_at"])


def _week_ago(at: str) -> str:
    return (datetime.fromisoformat(at.replace("Z", "+00:00")) - timedelta(days=7)).isoformat()


async def _orders(pool, order_ids: list[str]) -> int:
    return await pool.fetchval("SELECT count(*) FROM orders WHERE order_id = ANY($1)", order_ids)


async def test_altered_stream_commands_are_set_aside_and_the_rest_flow(stack, merchant, redis, keys, pool):
    status, created = await merchant.post("/b2b/v1/checkout-sessions/quick", {"amount": "5.00"})
    assert status == 201
    partition = keys.partition_of(created["order_id"])
    stream = keys.commands(partition)
    [original] = [json.loads(fields[b"m"]) for _id, fields in await redis.xrange(stream)
                  if json.loads(fields[b"m"])["command"]["order_id"] == created["order_id"]]
    assert original["command"]["kind"] == "create_order"

    appended: dict[str, str] = {}  # command id -> the words its dead letter must hold
    order_ids = []
    for _case, kind, alter, reason in ALTERATIONS:
        envelope = json.loads(json.dumps(original))
        envelope["command_id"] = f"cmd_{secrets.token_hex(12)}"
        while True:
            order_id = f"order-{secrets.randbelow(10**6)}" if kind == "malformed" else f"ord_{secrets.token_hex(12)}"
            if (keys.partition_of(order_id) == partition) == (kind != "elsewhere"):
                break
        envelope["command"]["order_id"] = order_id
        alter(envelope["command"])
        order_ids.append(envelope["command"]["order_id"])
        await redis.xadd(stream, {"m": json.dumps(envelope).encode()})
        appended[envelope["command_id"]] = reason
    garbage = secrets.token_bytes(64)
    await redis.xadd(stream, {"m": garbage})

    # 50 ordinary calls after them, on this partition and the others
    answers = await asyncio.gather(*[merchant.post("/b2b/v1/checkout-sessions/quick", {"amount": f"{n + 1}.00"})
                                     for n in range(50)])
    assert [s for s, _ in answers] == [201] * 50
    assert len({keys.partition_of(body["order_id"]) for _, body in answers}) == keys.partitions

    for _ in range(50):
        dead = {fields[b"command_id"].decode(): fields for _id, fields in await redis.xrange(keys.dead_letters)
                if fields[b"stream"] == stream.encode()}
        if set(appended) <= set(dead) and any(f[b"m"] == garbage for f in dead.values()):
            break
        await asyncio.sleep(0.1)
    for command_id, reason in appended.items():
        assert reason in dead[command_id][b"error"].decode(), (command_id, dead[command_id][b"error"])
    assert await _orders(pool, order_ids) == 0
    assert (await redis.xpending(stream, ACTORS_GROUP))["pending"] == 0


@pytest.mark.parametrize("case", [a[0] for a in ALTERATIONS])
def test_every_alteration_changes_the_command(case):
    """Each row of the table above alters what it names (a row that altered nothing would prove nothing)."""
    _case, kind, alter, _reason = next(a for a in ALTERATIONS if a[0] == case)
    if kind != "fresh":
        return  # altered by its order id alone
    command = {"kind": "create_order", "order_id": "ord_1", "amount": 1, "at": "2026-01-01T00:00:00Z",
               "session": {"session_id": "cs_1", "expires_at": "2026-01-01T00:30:00Z"}}
    before = json.dumps(command, sort_keys=True)
    alter(command)
    assert json.dumps(command, sort_keys=True) != before
