"""The profile's summary (bench/profile.py): shares of the busy samples, the loop's waits in epoll counted apart and
the root frames left out, one entry a function. A summary that counted idle waits as work, or a frame twice in a
recursive stack, would send the performance work after the wrong function."""

from __future__ import annotations

from bench.profile import top_frames

RAW = "\n".join([
    "main (svc.py:1);run (uvloop/__init__.py:5);epoll_pwait (libc.so.6) 50",
    "main (svc.py:1);run (uvloop/__init__.py:5);handle (/x/site-packages/web/app.py:10);write (libc.so.6) 30",
    "main (svc.py:1);run (uvloop/__init__.py:5);handle (/x/site-packages/web/app.py:12);sign (web/edge/signing.py:3) 10",
    "main (svc.py:1);run (uvloop/__init__.py:5);walk (tree.py:4);walk (tree.py:4);walk (tree.py:9) 10",
])


def _table(summary: str, title: str) -> dict[str, float]:
    """One of the summary's tables, frame -> percent."""
    section = summary.split(f"by {title} time:\n")[1].split("\nby ")[0]
    return {frame: float(share) for share, frame in (line.strip().split(" %  ") for line in section.splitlines())}


def test_shares_are_of_the_busy_samples_with_idle_waits_apart():
    summary = top_frames(RAW)
    assert summary.splitlines()[0] == "50 busy samples (50 more waiting in epoll)"
    own = _table(summary, "own")
    assert own == {"write (libc.so.6)": 60.0, "sign (web/edge/signing.py)": 20.0, "walk (tree.py)": 20.0}


def test_a_function_counts_once_a_stack_whatever_its_lines_and_the_root_frames_are_left_out():
    total = _table(top_frames(RAW), "total")
    assert total["handle (web/app.py)"] == 80.0  # two lines of one function, under site-packages
    assert total["walk (tree.py)"] == 20.0  # recursive: its samples once
    assert "main (svc.py)" not in total and "run (uvloop/__init__.py)" not in total  # on every busy stack
