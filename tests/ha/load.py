"""Merchants' backends under a fault: clients creating orders with Idempotency-Keys, retrying 5xx, and what the
service answered them; the processes' /readyz watched meanwhile."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field

import aiohttp

from testkit.signed import Signed
from tests.support.processes import created

CLIENTS = 16


@dataclass
class Ack:
    key: str
    order_id: str
    sent_at: float  # monotonic, the first attempt
    acked_at: float


@dataclass
class Load:
    client: Signed
    acks: list[Ack] = field(default_factory=list)
    failed: list[tuple[int, dict | None]] = field(default_factory=list)
    _run: str = field(default_factory=lambda: secrets.token_hex(3))
    _stopping: bool = False
    _tasks: list[asyncio.Task] = field(default_factory=list)

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._merchant(n)) for n in range(CLIENTS)]

    async def stop(self, timeout: float = 60) -> None:
        """No new orders; waits for those in progress to be acknowledged."""
        self._stopping = True
        try:
            await asyncio.wait_for(asyncio.gather(*self._tasks), timeout)
        except TimeoutError:
            raise AssertionError(f"orders still unanswered {timeout} s after the load stopped") from None

    async def _merchant(self, number: int) -> None:
        n = 0
        while not self._stopping:
            key = f"ha-{self._run}-{number}-{n}"
            sent_at = time.monotonic()
            # external_ref names the key: an order made twice for one key would show as two rows with it.
            body = await created(self.client, key, f"{number + 1}.{n % 100:02d}", attempts=1000,
                                 failed=self.failed, payload={"external_ref": key})
            self.acks.append(Ack(key, body["order_id"], sent_at, time.monotonic()))
            n += 1

    def first_answer_after(self, moment: float) -> float | None:
        """Seconds from `moment` to the first acknowledgement of an order first asked for after it."""
        times = [a.acked_at for a in self.acks if a.sent_at >= moment]
        return min(times) - moment if times else None

    def longest_silence(self) -> float:
        """The longest time in seconds in which no order was acknowledged."""
        times = sorted(a.acked_at for a in self.acks)
        return max((b - a for a, b in zip(times, times[1:])), default=0.0)


@dataclass
class Readiness:
    """Each process's /readyz every 0.3 s: (time, status, what its `postgres` check said)."""

    urls: dict[str, str]
    seen: dict[str, list[tuple[float, int, str]]] = field(default_factory=dict)
    _task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _watch(self) -> None:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
            while True:
                await asyncio.gather(*[self._probe(http, name, url) for name, url in self.urls.items()])
                await asyncio.sleep(0.3)

    async def _probe(self, http: aiohttp.ClientSession, name: str, url: str) -> None:
        try:
            async with http.get(url + "/readyz") as resp:
                answer = resp.status, (await resp.json())["checks"]["postgres"]
        except (aiohttp.ClientError, TimeoutError) as exc:
            answer = 0, f"no answer: {type(exc).__name__}"
        self.seen.setdefault(name, []).append((time.monotonic(), *answer))

    def told_the_truth(self, fault_at: float) -> dict[str, str]:
        """Per process, what is wrong with its answers since the fault: empty when it said 503 naming postgres,
        then 200 again."""
        wrong = {}
        for name in self.urls:
            after = [(status, check) for at, status, check in self.seen.get(name, []) if at >= fault_at]
            down = next((i for i, (status, check) in enumerate(after) if status == 503 and check != "ok"), None)
            if down is None:
                wrong[name] = f"never 503 naming postgres: {after[:5]}"
            elif not any(status == 200 for status, _ in after[down:]):
                wrong[name] = f"not 200 again: {after[-3:]}"
        return wrong
