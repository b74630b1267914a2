"""`service replay`, three ways, against real PostgreSQL and Redis: an order's timeline, every order touched since a
time (over the recorded histories of tests/histories, loaded into the database), and the dry run of a partition's
recorded commands through today's core, which names a command whose decision a change of `decide` alters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from actors import order as order_core
from service import dry_run
from tests.integration.helpers import pay, quick
from tests.integration.test_refunds_api import merchant_refund

ROOT = Path(__file__).resolve().parents[2]
HISTORIES = sorted((ROOT / "tests" / "histories").glob("*.json"))


def service(settings, *args: str) -> tuple[int, str]:
    env = dict(os.environ, DATABASE_URL=settings.database_url, REDIS_URL=settings.redis_url,
               REDIS_PREFIX=settings.redis_prefix, PARTITIONS=str(settings.partitions), LOG_LEVEL="WARNING")
    done = subprocess.run([sys.executable, "-m", "service", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    return done.returncode, done.stdout + done.stderr


async def _paid_refunded_and_refused(merchant) -> str:
    order_id = (await quick(merchant, amount="10.00"))["order_id"]
    assert (await pay(merchant, order_id, "10.00"))[0] == 201
    assert (await merchant.patch(f"/b2b/v1/orders/{order_id}/cancel"))[0] == 409  # paid: refused, nothing appended
    assert (await merchant_refund(merchant, order_id, "4.00"))[0] == 201
    return order_id


async def test_an_orders_timeline_names_each_command_its_reply_events_and_state(stack, merchant, settings):
    order_id = await _paid_refunded_and_refused(merchant)

    code, out = service(settings, "replay", order_id, "--json")
    assert code == 0, out
    found = json.loads(out)
    steps = found["commands"]
    assert [s["kind"] for s in steps] == ["create_order", "confirm_payment", "cancel_order", "create_refund"]
    assert [[e["type"] for e in s["events"]] for s in steps] == [
        ["order.created", "checkout_session.created"],
        ["payment.received", "checkout_session.completed", "payment.settled"],
        [],
        ["payment.refund.requested", "payment.refund.approved"]]
    assert [s["reply"]["ok"] for s in steps] == [True, True, False, True]
    assert steps[2]["reply"]["error"]["status"] == 409
    assert [s["state_after"]["status"] for s in steps] == ["PENDING", "PAID", "PAID", "PAID"]
    assert steps[3]["state_after"]["refunds"][0]["amount"] == 4_000_000
    assert all(s["command_id"].startswith("cmd_") and s["at"] and s["request_hash"] for s in steps)
    assert (found["events"], found["matches"], found["first_difference"]) == (7, True, None)

    # A snapshot that its events no longer rebuild: exit 1, and the first field that differs is named.
    await stack.pool.execute("UPDATE orders SET state = jsonb_set(state, '{amount_paid}', '9000000')"
                             " WHERE order_id = $1", order_id)
    code, out = service(settings, "replay", order_id)
    assert code == 1
    assert "DIVERGES from the stored snapshot at amount_paid: rebuilt 10000000, stored 9000000" in out
    assert service(settings, "replay", "ord_" + "0" * 24)[0] == 1


async def _load_history(pool, path: Path, merchant_id: str) -> str:
    """A recorded history as the actor would have stored it: its events and its snapshot, in schema 1."""
    recorded = json.loads(path.read_text())
    order_id = f"ord_{path.stem[:20]}"
    state = dict(recorded["state"], order_id=order_id, merchant_id=merchant_id)
    for seq, event in enumerate(recorded["events"], start=1):
        data = dict(event, order_id=order_id, merchant_id=merchant_id) if event["type"] == "order.created" else event
        await pool.execute(
            "INSERT INTO events (event_id, order_id, seq, type, merchant_id, livemode, data, created_at, schema)"
            " VALUES ($1, $2, $3, $4, $5, false, $6, $7, $8)", f"evt_{order_id}_{seq}", order_id, seq, event["type"],
            merchant_id, json.dumps(data), datetime.fromisoformat(event["at"]), recorded["schema"]["events"])
    await pool.execute(
        "INSERT INTO orders (order_id, merchant_id, livemode, order_number, status, state, state_schema, version,"
        " created_at, updated_at) VALUES ($1, $2, false, $3, $4, $5, $6, $7, $8, $8)",
        order_id, merchant_id, state["order_number"], state["status"], json.dumps(state), recorded["schema"]["state"],
        state["version"], datetime.now(UTC))
    return order_id


async def test_since_checks_every_recorded_history_and_exits_1_on_a_divergence(pool, settings):
    merchant_id = "mer_histories"
    orders = [await _load_history(pool, path, merchant_id) for path in HISTORIES]
    assert len(orders) == 4

    code, out = service(settings, "replay", "--since", "1h", "--merchant", merchant_id, "--json")
    assert code == 0, out
    summary = json.loads(out)
    assert (summary["orders"], summary["matching"], summary["diverged"]) == (4, 4, [])

    await pool.execute("UPDATE orders SET state = jsonb_set(state, '{status}', '\"CANCELED\"') WHERE order_id = $1",
                       orders[0])
    code, out = service(settings, "replay", "--since", datetime.now(UTC).date().isoformat(),
                        "--merchant", merchant_id)
    assert code == 1
    assert "orders touched since" in out and "4, matching their snapshot: 3, diverging: 1" in out
    assert f"DIVERGES {orders[0]}: status: rebuilt" in out and 'stored "CANCELED"' in out
    assert service(settings, "replay", "--since", "2099-01-01", "--merchant", merchant_id)[0] == 0


async def _partition_of(stack, keys, redis, order_id: str) -> tuple[int, str]:
    """The order's partition and the entry id of its first command there."""
    partition = keys.partition_of(order_id)
    for entry_id, fields in await redis.xrange(keys.commands(partition)):
        if order_id.encode() in fields.get(b"m", b""):
            return partition, entry_id.decode()
    raise AssertionError(f"no command of {order_id} on its partition")


async def test_a_dry_run_reruns_recorded_commands_and_agrees_with_them(stack, merchant, settings, keys, redis):
    order_id = await _paid_refunded_and_refused(merchant)
    partition, first = await _partition_of(stack, keys, redis, order_id)

    code, out = service(settings, "replay", "--partition", str(partition), "--from", first, "--dry-run", "--json")
    assert code == 0, out
    found = json.loads(out)
    assert found["differences"] == [] and found["first_retained"] is not None
    # This order's four commands all run again (other tests' traffic on the partition after them does too).
    assert found["rerun"] >= 4 and found["entries"] == found["rerun"] + len(found["skipped"])
    assert service(settings, "replay", "--partition", str(partition), "--from", first)[0] == 2  # no --dry-run


async def test_a_dry_run_names_the_command_a_changed_decide_decides_otherwise(stack, merchant, pool, keys, redis,
                                                                               monkeypatch):
    order_id = await _paid_refunded_and_refused(merchant)
    partition, first = await _partition_of(stack, keys, redis, order_id)
    [payment_command] = [r["command_id"] for r in await pool.fetch(
        "SELECT command_id FROM commands WHERE order_id = $1 AND kind = 'confirm_payment'", order_id)]

    pay_today = order_core._pay

    def pay_settles_nothing(order, cmd):  # a deploy that forgot the settlement
        return [e for e in pay_today(order, cmd) if e.__struct_config__.tag != "payment.settled"]

    monkeypatch.setattr(order_core, "_pay", pay_settles_nothing)
    async with pool.acquire() as conn:
        found = await dry_run.dry_run(conn, redis, keys, partition, first)
    mine = [d for d in found.differences if d.order_id == order_id]
    assert [(d.command_id, d.kind, d.what) for d in mine] == [(payment_command, "confirm_payment", "events")]
    assert [e["type"] for e in mine[0].recorded][-1] == "payment.settled"
    assert "payment.settled" not in [e["type"] for e in mine[0].now]
    assert f"DIFFERS {mine[0].entry_id} {payment_command} confirm_payment on {order_id}: events" in dry_run.text(found)

    monkeypatch.undo()
    async with pool.acquire() as conn:
        assert [d for d in (await dry_run.dry_run(conn, redis, keys, partition, first)).differences
                if d.order_id == order_id] == []
