"""What only the live runtime can check of a command read from a stream, before the core decides it.

The core's own invariants (actors/invariants.py) hold on replay too; these do not: a recorded command
replayed today is old by design, so its time is checked here and never by `decide`.

A command's `at` is compared with the time Redis stamped on its entry when it was appended, and that
stamp with the worker's clock. Commands that waited in their partition while no worker ran (an outage,
a deploy) are then still accepted when a worker comes back; a command whose `at` was altered, or an
entry appended with a made-up id, is not. A dead letter put back by an operator names the entry it was
first read from, and that entry's time counts.
"""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec

from actors import messages as m
from common import order_limits


class Refusal(msgspec.Struct, frozen=True):
    reason: str
    # The entry is "from the future" by the worker's clock: either its id was made up, or the worker's clock is
    # behind. The worker checks its clock against Redis's before it sets such a command aside.
    reader_clock: bool = False


def _describe(param: str, skew_s: float, against: str, max_skew_s: float) -> str:
    direction = "ahead of" if skew_s > 0 else "behind"
    return (f"command_skew: {param} is {abs(skew_s):.0f} s {direction} {against}, more than COMMAND_MAX_SKEW_S "
            f"({max_skew_s:g} s)")


def refusal(env: m.Envelope, entry_id: bytes, found_on: int, belongs_to: int, now: datetime,
            max_skew_s: float) -> Refusal | None:
    """Why the command, read from partition `found_on`, is refused at intake, or None. An order's commands are
    decided by the owner of its partition alone: one found on another partition could race that owner."""
    if found_on != belongs_to:
        return Refusal(f"wrong_partition: the order's commands belong on partition {belongs_to}, not {found_on}")
    appended = datetime.fromtimestamp(int(entry_id.split(b"-")[0]) / 1000, timezone.utc)
    ahead = (appended - now).total_seconds()
    if ahead > max_skew_s:
        return Refusal(_describe("the entry id", ahead, "the worker's clock", max_skew_s), reader_clock=True)
    at = env.command.at
    if not order_limits.is_utc(at):
        return None  # the core refuses it, naming the field
    skew = (at - appended).total_seconds()
    if abs(skew) > max_skew_s:
        return Refusal(_describe("`command.at`", skew, "the time its entry was appended", max_skew_s))
    return None
