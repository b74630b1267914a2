"""A worker whose clock is off takes no partition, and no request pays for it: two actor workers under keyed
load, one run by libfaketime 10 minutes behind (or ahead); every request is answered by the healthy one, none
with 500, and nothing is dead-lettered (docs/operations.md, Clocks)."""

from __future__ import annotations

import asyncio
import re

import aiohttp
import pytest
import redis.asyncio as aioredis

from streams.names import Keys
from tests.conftest import REDIS_URL
from tests.support.metrics import probe, scrape, value
from tests.support.processes import created, deployment, free_port, until_answered
from tests.support.waiting import until

CLIENTS, EACH = 16, 12


def libfaketime(shift: str) -> tuple[str, ...]:
    """Debian's libfaketime under the process itself: `env` execs it, where the `faketime` script would fork it and
    a stop would reach the script alone, leaving the worker running."""
    return ("env", "LD_PRELOAD=/usr/$LIB/faketime/libfaketime.so.1", f"FAKETIME={shift}")


async def _clock_named(http: aiohttp.ClientSession, url: str) -> bool:
    status, body = await probe(http, url + "/readyz")
    return status == 503 and body["checks"]["clock"] != "ok"


@pytest.mark.parametrize("shift", ["-600s", "+600s"])
async def test_a_worker_whose_clock_is_off_serves_nothing_and_no_request_fails(shift, tmp_path):
    off_port = free_port()
    # The skewed worker starts alone: before this check it took every partition.
    async with deployment(REDIS_URL, ("actors-off", "web"), output=tmp_path, answering=False,
                          args={"actors-off": ("--metrics-port", str(off_port))},
                          wrap={"actors-off": libfaketime(shift)}) as (procs, client, _pool), \
            aiohttp.ClientSession() as http:
        assert (await probe(http, f"http://127.0.0.1:{off_port}/healthz"))[0] == 200
        # Readiness names the clock once the worker has measured it, which its lease keeper does before each lease
        # refresh: the first refresh has been refused.
        await until(lambda: _clock_named(http, f"http://127.0.0.1:{off_port}"), "the skewed worker's first refresh",
                    timeout=30)
        procs.start("actors", "actors")
        await until_answered(client)
        failed: list[tuple[int, dict | None]] = []
        await asyncio.gather(*(created(client, f"skew-{c}-{n}", amount=f"{c + 1}.{n:02d}", failed=failed)
                               for c in range(CLIENTS) for n in range(EACH)))
        assert not [answer for answer in failed if answer[0] not in (0, 503, 504)]

        keys = Keys(procs.env["REDIS_PREFIX"], int(procs.env["PARTITIONS"]))
        redis = aioredis.from_url(REDIS_URL)
        try:
            holders = {await redis.get(keys.lease(p)) for p in range(keys.partitions)}
            dead = await redis.xlen(keys.dead_letters)
        finally:
            await redis.aclose()
        healthy = procs.procs["actors"].pid
        assert {int(h.decode().split("-")[-2]) for h in holders} == {healthy}
        assert dead == 0

        off = f"http://127.0.0.1:{off_port}"
        status, body = await probe(http, off + "/readyz")
        assert status == 503 and body["checks"]["clock"].startswith("clock 600."), body
        assert value(await scrape(http, off + "/metrics"), "actor_commands_total", outcome="ok") == 0
        assert abs(value(await scrape(http, off + "/metrics"), "clock_offset_seconds") - float(shift[:-1])) < 5
    direction = "behind" if shift.startswith("-") else "ahead of"
    log = (tmp_path / "actors-off.err").read_text()
    # The offset is measured at the midpoint of a round trip, so a loaded box may read 599.9 or 600.1 s.
    assert len(re.findall(rf"the clock is (?:599\.9|600\.\d) s {direction} Redis's TIME", log)) == 1, log[-3000:]
