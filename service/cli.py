"""The `service` command: run processes, migrate, manage merchants and keys, replay an order. This module is its
argument parser; the operator commands are in service/operator.py, the dev supervisor in service/dev.py."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from chain_watchers.registry import FAMILIES
from common import logs
from service import moments
from service.dev import cmd_dev
from service.operator import (
    cmd_db,
    cmd_deadletters,
    cmd_keys,
    cmd_merchant_limits,
    cmd_merchants,
    cmd_process,
    cmd_replay,
    cmd_streams_republish,
    cmd_streams_status,
    cmd_streams_tail,
    cmd_users,
)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


# What `service --help` tells an operator; the module's docstring is for those who change the code.
DESCRIPTION = ("The payments service: run its processes (`service dev` runs them all on embedded PostgreSQL and"
               " Redis), migrate the database, manage merchants, keys and staff, inspect the streams and replay"
               " orders. `service COMMAND --help` tells more of each command.")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="service", description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True)

    dev = sub.add_parser("dev", help="run web, actors, scheduler, webhooks and chain watchers on embedded defaults")
    dev.add_argument("--port", type=int)
    dev.add_argument("--workers", type=int, default=1, help="actor worker processes")
    dev.add_argument("--metrics-port", type=int, metavar="PORT",
                     help="the first worker process serves /metrics there, the next one on the next port, and so on")
    dev.set_defaults(run=cmd_dev)
    web = sub.add_parser("web", help="run the web process (/metrics, /healthz and /readyz on its own port)")
    web.add_argument("--port", type=int)
    web.add_argument("--share-port", action="store_true",
                     help="let other web processes of this deployment listen on the same port (the kernel spreads"
                          " connections among them); without it a taken port stops this one, naming its holder")
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
    try:
        sys.exit(args.run(args))
    except BrokenPipeError:
        # The reader went away (`service streams tail ... | head`): it has all it wanted. Nothing to say, and stdout
        # is pointed at /dev/null so that the interpreter's last flush at exit does not fail on the pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
