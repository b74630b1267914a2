"""Where each process of a design spends its CPU under the bench's load: py-spy on every process of one round.

    python bench/profile.py --out /tmp/profile -- --against none --rounds 1 --seconds 15
    python bench/profile.py --summary /tmp/profile/web1.txt     # the top frames of one profile again

Runs bench/run.py with the arguments after `--` and, once its measured load starts (wrk's run of --seconds), records
each process the bench started (`web1`, `web2`, `actors1`, `peer1`, ...) with `py-spy record --native --format raw`
(`pip install py-spy`; root, or ptrace allowed) for most of the round. Prints each process's top frames by own time
(samples with the frame innermost) and by total time (samples with the frame anywhere on the stack), in percent of
the process's busy samples: those waiting in epoll (the loop idle) are counted apart. The profiler takes a
little CPU of its own: the round's figures are not the bench's, take those from a run without it.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import re
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
TOP = 25


IDLE = ("epoll_wait", "epoll_pwait")  # the event loop waiting: native profiles show it as a frame of its own
ROOT_SHARE = 0.95  # frames on nearly every busy stack (the loop, run_app, main): the root, not a finding


def top_frames(collapsed: str, top: int = TOP) -> str:
    """A py-spy raw profile (one `frame;frame;...;innermost count` line per distinct stack) as two tables, in percent
    of the process's busy samples (those not waiting in epoll): by own time (the innermost frame) and by total time
    (the frame anywhere on the stack; the root frames left out)."""
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    busy = idle = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_short(f) for f in stack.split(";")]
        if frames[-1].startswith(IDLE):
            idle += int(count)
            continue
        busy += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            total[frame] += int(count)
    lines = [f"{busy} busy samples ({idle} more waiting in epoll)"]
    for title, counter in (("own", own), ("total", total)):
        lines.append(f"by {title} time:")
        found = [(f, n) for f, n in counter.most_common() if n < ROOT_SHARE * busy][:top]
        lines += [f"  {100 * n / max(busy, 1):5.1f} %  {frame}" for frame, n in found]
    return "\n".join(lines)


def _short(frame: str) -> str:
    """`function (path/to/module.py:line)` without the line nor the site-packages prefix: one entry a function."""
    frame = re.sub(r":\d+\)$", ")", frame)
    return re.sub(r"\(/.*?/(site-packages|lib/python3\.\d+|perfweb|main)/", "(", frame)


async def profile(bench_args: list[str], out: Path, seconds: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    bench = await asyncio.create_subprocess_exec(sys.executable, str(ROOT / "bench" / "run.py"), *bench_args,
                                                 cwd=ROOT, stdout=asyncio.subprocess.DEVNULL)
    me = psutil.Process(bench.pid)
    recorded: set[int] = set()
    recorders = []
    while bench.returncode is None:
        children = me.children()
        measured = [c for c in children if c.name() == "wrk" and "-d2s" not in c.cmdline()]
        if measured and measured[0].pid not in recorded:
            recorded.add(measured[0].pid)
            servers = [c for c in children if c.name().startswith("python")]
            recorders += [await _record(p, out, seconds, n) for n, p in enumerate(servers)]
        await asyncio.sleep(0.2)
    for name, recorder in recorders:
        await recorder.wait()
        path = out / f"{name}.txt"
        if path.exists():
            print(f"== {name}\n{top_frames(path.read_text())}\n")


async def _record(proc: psutil.Process, out: Path, seconds: float, n: int):
    cmdline = " ".join(proc.cmdline())
    kind = "actors" if " actors" in cmdline else "web" if " web" in cmdline else "peer" if "peer.py" in cmdline else "p"
    name = f"{kind}{n}-{int(time.time())}"
    recorder = await asyncio.create_subprocess_exec(
        "py-spy", "record", "--native", "--format", "raw", "--rate", "200", "--duration", str(int(seconds)),
        "--pid", str(proc.pid), "-o", str(out / f"{name}.txt"), stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    return name, recorder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="/tmp/profile", help="folder of the raw profiles, one a process")
    parser.add_argument("--record-seconds", type=float, default=10, help="how long each process is recorded")
    parser.add_argument("--summary", help="only print the top frames of this raw profile")
    parser.add_argument("bench", nargs=argparse.REMAINDER, help="bench/run.py's arguments, after --")
    args = parser.parse_args()
    if args.summary:
        print(top_frames(Path(args.summary).read_text()))
        return
    asyncio.run(profile([a for a in args.bench if a != "--"], Path(args.out), args.record_seconds))


if __name__ == "__main__":
    main()
