"""One delivery attempt over HTTP: signed POST, 10 s budget, no redirects, a capped read of the answer."""

from __future__ import annotations

import logging
import time
from datetime import datetime

import aiohttp
import msgspec

from common.clock import Clock, utcnow
from webhooks import signing
from webhooks.ssrf import guarded_socket

log = logging.getLogger(__name__)
READ_CAP = 4096        # bytes of the answer read at most; the rest is never read (the connection closes)
KEPT = 1024            # characters of it kept in the attempt log


class Job(msgspec.Struct, kw_only=True):
    """A claimed delivery, ready to send."""

    delivery_id: str
    event_id: str
    event_type: str
    endpoint_id: str
    livemode: bool
    url: str
    secrets: list[str]
    payload: bytes
    attempts: int
    round_attempts: int
    round_started_at: datetime | None
    # For the log of its attempts only; never sent.
    merchant_id: str = ""
    order_id: str | None = None
    request_id: str | None = None

    def log_ids(self) -> dict[str, str | None]:
        return {"request_id": self.request_id, "order_id": self.order_id, "merchant_id": self.merchant_id,
                "event_id": self.event_id, "endpoint_id": self.endpoint_id, "delivery_id": self.delivery_id}


class Attempt(msgspec.Struct, kw_only=True):
    """What one attempt did, as the log records it."""

    job: Job
    attempted_at: datetime
    request_headers: dict[str, str]
    status_code: int | None = None
    error: str | None = None
    latency_ms: int = 0
    response_body: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


async def _read_capped(resp: aiohttp.ClientResponse) -> str:
    kept = bytearray()
    while len(kept) < READ_CAP:
        chunk = await resp.content.read(READ_CAP - len(kept))
        if not chunk:
            break
        kept += chunk
    return kept.decode("utf-8", "replace")[:KEPT]


def _session(timeout_s: float, live: bool) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=0, socket_factory=guarded_socket if live else None)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=timeout_s),
        cookie_jar=aiohttp.DummyCookieJar(),  # one merchant's cookies never ride along to the next request
        skip_auto_headers=("Accept", "Accept-Encoding"),
        auto_decompress=False,
        trust_env=False,  # no proxy from the environment: the live guard must see the real destination
    )


class Sender:
    """Two client sessions: live mode's checks every address it connects to, test mode's may reach localhost."""

    def __init__(self, timeout_s: float, clock: Clock = utcnow):
        self.timeout_s = timeout_s
        self.clock = clock
        self._sessions: dict[bool, aiohttp.ClientSession] = {}

    async def start(self) -> None:
        self._sessions = {live: _session(self.timeout_s, live) for live in (True, False)}

    async def close(self) -> None:
        for session in self._sessions.values():
            await session.close()

    async def attempt(self, job: Job) -> Attempt:
        now = self.clock()
        headers = signing.headers(job.secrets, int(now.timestamp()), job.payload, job.event_id, job.event_type)
        done = Attempt(job=job, attempted_at=now, request_headers=headers)
        started = time.monotonic()
        try:
            async with self._sessions[job.livemode].post(job.url, data=job.payload, headers=headers,
                                                         allow_redirects=False) as resp:
                done.status_code = resp.status
                done.response_body = await _read_capped(resp)
        except TimeoutError:
            done.error = f"timeout: no complete answer within {self.timeout_s:g} s"
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            done.error = f"{type(exc).__name__}: {exc}"[:500]
        except Exception as exc:  # whatever else: a failed attempt, never a lane that stops silently
            log.exception("webhooks: unexpected error delivering %s", job.delivery_id, extra=job.log_ids())
            done.error = f"{type(exc).__name__}: {exc}"[:500]
        done.latency_ms = int((time.monotonic() - started) * 1000)
        return done
