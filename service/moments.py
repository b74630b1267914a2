"""The moments an operator types: an ISO date or time, or a duration back from now (`90s`, `15m`, `2h`, `7d`)."""

from __future__ import annotations

import argparse
import re
import time
from datetime import UTC, datetime, timedelta

from common.clock import utcnow
from streams.connection import parse_entry_id

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def duration_s(text: str) -> float | None:
    """Seconds of a duration such as `15m`; None when the text is no duration."""
    found = _DURATION.fullmatch(text.strip())
    return float(found[1]) * _UNIT_S[found[2]] if found else None


def moment(text: str, now: datetime) -> datetime:
    """`2026-11-25`, `2026-11-25T06:00:00Z` (UTC when no zone is given) or a duration before `now`."""
    back = duration_s(text)
    if back is not None:
        return now - timedelta(seconds=back)
    found = datetime.fromisoformat(text.strip())
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def since_arg(text: str) -> datetime:
    """argparse type of a `--since DATE`: the moment, or a usage error naming what is accepted."""
    try:
        return moment(text, utcnow())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an ISO date or time nor a duration such as 90s, 15m, 2h, 7d") from None


def entry_start_arg(text: str) -> str:
    """argparse type of tail's `--since ID|DURATION`: an entry id as given, or a duration back from now as the id
    of that moment."""
    back = duration_s(text)
    if back is not None:
        return f"{int((time.time() - back) * 1000)}-0"
    try:
        parse_entry_id(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a stream entry id (1700000000000-0) nor a duration such as 90s, 15m, 2h") from None
    return text

