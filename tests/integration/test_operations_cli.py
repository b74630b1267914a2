"""`service streams status` and `service deadletters`, run as the people on call run them, against real
Redis with known traffic."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from streams.names import ACTORS_GROUP, Keys
from tests.integration.helpers import quick
from tests.support.commands import create_order, make_core_raise
from tests.support.waiting import until

ROOT = Path(__file__).resolve().parents[2]


def service(settings, prefix: str, partitions: int, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    env = dict(os.environ, REDIS_URL=settings.redis_url, REDIS_PREFIX=prefix, PARTITIONS=str(partitions),
               LEASE_TTL_MS="5000", LOG_LEVEL="WARNING") | (env or {})
    done = subprocess.run([sys.executable, "-m", "service", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    return done.returncode, done.stdout


async def test_status_counts_lag_pending_and_leases(settings, redis):
    keys = Keys(f"{settings.redis_prefix}ops{secrets.token_hex(3)}:", 2)
    stream = keys.commands(0)
    await redis.xgroup_create(stream, ACTORS_GROUP, id="0", mkstream=True)
    for _ in range(5):
        await redis.xadd(stream, {"m": create_order("mer_ops").command_id.encode()})
    await redis.xreadgroup(ACTORS_GROUP, "w1", {stream: ">"}, count=2)  # read, never acknowledged
    await redis.set(keys.lease(0), "w1", px=5000)
    await redis.xadd(keys.dead_letters, {"stream": stream, "command_id": "cmd_x", "error": "boom"})

    code, out = service(settings, keys.prefix, 2, "streams", "status", "--json")
    assert code == 0, out
    found = json.loads(out)
    p0, p1 = found["partitions"]
    [group] = p0["stream"]["groups"]
    assert (p0["stream"]["length"], group["lag"], group["pending"], group["oldest_pending_deliveries"]) == (5, 3, 2, 1)
    assert p0["lease_holder"] == "w1" and 0 <= p0["lease_renewed_s_ago"] < 5
    assert p1["stream"]["length"] == 0 and p1["lease_holder"] is None
    assert found["dead_letters"] == {stream: 1} and found["problems"] == []

    code, out = service(settings, keys.prefix, 2, "streams", "status", "--max-lag", "2")
    assert code == 1 and "PROBLEM partition 0: group actors lags 3 entries (over 2)" in out
    await asyncio.sleep(0.3)
    code, out = service(settings, keys.prefix, 2, "streams", "status", "--max-pending-age", "0.2", "--json")
    assert code == 1 and "oldest pending entry is" in json.loads(out)["problems"][0]
    await redis.delete(keys.lease(0))
    code, out = service(settings, keys.prefix, 2, "streams", "status", "--json")
    assert code == 1 and json.loads(out)["problems"] == [
        "partition 0: commands waiting and no worker holds its lease"]


async def test_dead_letters_listed_shown_retried_once_fixed_and_dropped(stack, settings, keys, redis, monkeypatch):
    command = create_order("mer_ops_dead")
    make_core_raise(monkeypatch, command.command.order_id, "a bug since fixed")
    await redis.xadd(keys.commands(keys.partition_of(command.command.order_id)), {"m": command_bytes(command)})
    letter = await _dead_letter_of(settings, command.command_id)
    assert letter["deliveries"] == 5 and letter["error"] == "RuntimeError: a bug since fixed"

    code, out = service(settings, settings.redis_prefix, settings.partitions, "deadletters", "show", letter["id"],
                        "--json")
    shown = json.loads(out)
    assert code == 0 and "raising" in shown["trace"] and json.loads(shown["command"])["command_id"] == command.command_id

    monkeypatch.undo()  # the fix is deployed
    code, out = service(settings, settings.redis_prefix, settings.partitions, "deadletters", "retry", letter["id"])
    assert code == 0 and out.startswith(f"retried {letter['id']}")
    for _ in range(50):
        if await stack.pool.fetchval("SELECT count(*) FROM orders WHERE order_id = $1", command.command.order_id):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the retried command was never applied")
    assert letter["id"] not in [d["id"] for d in await _letters(settings)]

    # A second copy of the same command, set aside and retried, is answered from the record: applied once.
    dead_id = await redis.xadd(keys.dead_letters, {"stream": keys.commands(keys.partition_of(command.command.order_id)),
                                                   "entry_id": "1-0", "command_id": command.command_id,
                                                   "deliveries": "1", "error": "copy", "m": command_bytes(command)})
    code, out = service(settings, settings.redis_prefix, settings.partitions, "deadletters", "retry", dead_id.decode(),
                        "--json")
    assert code == 0
    stream, entry_id = keys.commands(keys.partition_of(command.command.order_id)), json.loads(out)["entry_id"]
    await until(lambda: _acknowledged(redis, stream, entry_id), "the actors finish the retried copy")
    assert await stack.pool.fetchval("SELECT count(*) FROM events WHERE order_id = $1", command.command.order_id) == 2

    dead_id = await redis.xadd(keys.dead_letters, {"stream": "x", "error": "to drop"})
    assert service(settings, settings.redis_prefix, settings.partitions, "deadletters", "drop", dead_id.decode())[0] == 0
    assert dead_id.decode() not in [d["id"] for d in await _letters(settings)]
    assert service(settings, settings.redis_prefix, settings.partitions, "deadletters", "drop", dead_id.decode())[0] == 1


async def _acknowledged(redis, stream: str, entry_id: str) -> bool:
    """Read by the actors' group and no longer pending: a worker has finished with the entry."""
    [group] = [g for g in await redis.xinfo_groups(stream) if g["name"].decode() == ACTORS_GROUP]
    read = _entry_order(group["last-delivered-id"].decode()) >= _entry_order(entry_id)
    return read and not await redis.xpending_range(stream, ACTORS_GROUP, min=entry_id, max=entry_id, count=1)


def _entry_order(entry_id: str) -> tuple[int, int]:
    ms, seq = entry_id.split("-")
    return int(ms), int(seq)


def command_bytes(envelope) -> bytes:
    return msgspec.json.encode(envelope)


async def _letters(settings) -> list[dict]:
    code, out = service(settings, settings.redis_prefix, settings.partitions, "deadletters", "list", "--count",
                        "10000", "--json")
    assert code == 0
    return json.loads(out)


async def _dead_letter_of(settings, command_id: str) -> dict:
    for _ in range(50):
        found = [d for d in await _letters(settings) if d["command_id"] == command_id]
        if found:
            return found[0]
        await asyncio.sleep(0.2)
    raise AssertionError(f"{command_id} never reached the dead letters")


def tail_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


async def test_tail_decodes_commands_events_and_dead_letters_of_one_order(stack, settings, keys, merchant, redis):
    order_id = (await quick(merchant, amount="12.00"))["order_id"]
    other = (await quick(merchant, amount="3.00"))["order_id"]
    partition = keys.partition_of(order_id)
    tail = functools.partial(service, settings, keys.prefix, keys.partitions, "streams", "tail")

    code, out = tail(f"cmd:{partition}", "--order", order_id)
    [command] = tail_lines(out)
    assert code == 0 and (command["kind"], command["order_id"]) == ("command", order_id)
    assert command["envelope"]["command"]["kind"] == "create_order"

    code, out = tail("events", "--order", order_id)
    events = tail_lines(out)
    assert {e["order_id"] for e in events} == {order_id}
    assert [e["event"]["type"] for e in events][:2] == ["order.created", "checkout_session.created"]
    code, out = tail("events")
    assert {other, order_id} <= {e["order_id"] for e in tail_lines(out)}

    code, out = tail("events", "--since", "1h", "--order", order_id)
    assert len(tail_lines(out)) == len(events)
    last = events[-1]["id"]
    code, out = tail("events", "--since", last, "--order", order_id)
    assert [e["id"] for e in tail_lines(out)] == [last]

    dead = create_order("mer_ops", order_id)
    await redis.xadd(keys.dead_letters, {"stream": keys.commands(partition), "command_id": dead.command_id,
                                         "error": "boom", "m": msgspec.json.encode(dead)})
    code, out = tail("dead", "--order", order_id)
    [letter] = tail_lines(out)
    assert (letter["kind"], letter["command_id"], letter["error"]) == ("dead_letter", dead.command_id, "boom")
    assert letter["command"]["command"]["order_id"] == order_id

    code, out = tail("nowhere")
    assert code != 0


async def test_republish_puts_committed_events_back_on_a_stream_redis_lost(stack, settings, keys, merchant, redis):
    order_id = (await quick(merchant, amount="4.00"))["order_id"]
    committed = await stack.pool.fetch("SELECT event_id FROM events WHERE order_id = $1 ORDER BY seq", order_id)
    env = {"DATABASE_URL": settings.database_url}
    republish = functools.partial(service, settings, keys.prefix, keys.partitions, "streams", "republish", env=env)

    code, out = republish("--since", "1h", "--merchant", merchant.merchant_id, "--dry-run", "--json")
    assert code == 0 and json.loads(out)["events"] >= len(committed) and json.loads(out)["dry_run"]
    await redis.delete(keys.events)  # what a Redis without persistence loses on a restart
    code, out = republish("--since", "1h", "--merchant", merchant.merchant_id, "--json")
    assert code == 0, out
    entries = await redis.xrange(keys.events)
    ids = [json.loads(fields[b"e"])["id"] for _id, fields in entries]
    assert [e["event_id"] for e in committed] == [i for i in ids if i in {e["event_id"] for e in committed}]
    assert len(ids) == json.loads(out)["events"]


def service_error(settings, *args: str) -> tuple[int, str]:
    env = dict(os.environ, REDIS_URL=settings.redis_url, DATABASE_URL=settings.database_url, LOG_LEVEL="WARNING")
    done = subprocess.run([sys.executable, "-m", "service", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    return done.returncode, done.stderr


@pytest.mark.parametrize("args", [("streams", "tail", "events", "--since", "yesterday"),
                                  ("streams", "republish", "--since", "2026-13-45"),
                                  ("replay", "--since", "soon")])
def test_a_since_that_is_neither_a_time_nor_a_duration_is_a_usage_error_naming_it(settings, args):
    code, err = service_error(settings, *args)
    assert code == 2 and f"argument --since: '{args[-1]}' is neither" in err


async def test_tail_piped_into_head_ends_quietly(settings, redis):
    """`service streams tail events | head` printed a BrokenPipeError traceback once head had its lines and left:
    now the command ends as quietly as `cat | head`, with status 0."""
    keys = Keys(f"{settings.redis_prefix}pipe{secrets.token_hex(3)}:", 1)
    async with redis.pipeline(transaction=False) as pipe:
        for n in range(2000):  # far more than a pipe holds, so a write fails after head has gone
            pipe.xadd(keys.events, {"e": json.dumps({"type": "order.created", "order_id": f"ord_{n:060d}"})})
        await pipe.execute()
    env = dict(os.environ, REDIS_URL=settings.redis_url, REDIS_PREFIX=keys.prefix, PARTITIONS="1", LOG_LEVEL="WARNING")
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m service streams tail events | head -2"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert [json.loads(line)["event"]["order_id"] for line in done.stdout.splitlines()] == [
        f"ord_{n:060d}" for n in range(2)]
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("args", [("--help",), ("streams", "--help"), ("merchants", "create", "--help")])
def test_help_speaks_to_the_operator_not_to_the_code_s_developers(args):
    """`service --help` printed the module's notes for developers ("This module is its argument parser; the
    operator commands are in service/operator.py ...")."""
    done = subprocess.run([sys.executable, "-m", "service", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.startswith("usage: service")
    assert ".py" not in done.stdout and "module" not in done.stdout.lower()
