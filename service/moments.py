"""The moments an operator types: an ISO date or time, or a duration back from now (`90s`, `15m`, `2h`, `7d`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

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
